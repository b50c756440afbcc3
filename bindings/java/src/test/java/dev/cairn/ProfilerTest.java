package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The profiler: start/stop, events, dropped events, Chrome trace JSON and the TensorBoard export. */
class ProfilerTest {
  @TempDir Path dir;

  @AfterEach
  void stopIfOn() {
    if (Profiler.active()) Profiler.stop().close();
  }

  @Test
  void recordsEagerOpsAndFunctions() throws Exception {
    try (CairnContext ctx = new CairnContext();
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2);
        CompiledFunction fn = CompiledFunction.create(ctx, "sq", 1, (c, in) -> new Tensor[] {Ops.mul(c, in[0], in[0])})) {
      for (Tensor t : fn.call(x)) t.close(); // traced before the profile
      Profiler.start();
      assertTrue(Profiler.active());
      assertEquals(Code.FAILED_PRECONDITION, assertThrows(CairnException.class, () -> Profiler.start()).code());
      Ops.add(ctx, x, x).close();
      for (Tensor t : fn.call(x)) t.close();
      try (Profile p = Profiler.stop()) {
        assertFalse(Profiler.active());
        assertTrue(p.eventCount() >= 2, "events: " + p.eventCount());
        assertEquals(0, p.dropped());
        assertEquals(p.eventCount(), p.events().size());
        assertTrue(p.events().stream().anyMatch(e -> e.name().equals("Add") && e.category().equals("eager")), p.events().toString());
        assertTrue(p.events().stream().anyMatch(e -> e.category().equals("function")), p.events().toString());
        Profiler.Event first = p.event(0);
        assertEquals("cpu", first.device());
        assertTrue(first.startNs() >= 0 && first.durationNs() >= 0);
        assertEquals(Code.OUT_OF_RANGE, assertThrows(CairnException.class, () -> p.event(p.eventCount())).code());

        String json = p.chromeTrace();
        assertTrue(json.contains("\"traceEvents\""), json);
        assertTrue(json.contains("\"Add\""), json);
        Path trace = dir.resolve("trace.json");
        p.exportChromeTrace(trace.toString());
        assertEquals(json, Files.readString(trace));
        String gz = p.exportToLogdir(dir.resolve("logs").toString(), "run1");
        assertTrue(gz.startsWith(dir.resolve("logs/plugins/profile/run1").toString()) && gz.endsWith(".trace.json.gz"), gz);
        assertTrue(Files.size(Path.of(gz)) > 0);
        assertEquals(Code.INVALID_ARGUMENT,
            assertThrows(CairnException.class, () -> p.exportToLogdir(dir.toString(), "a/b")).code());
      }
    }
    assertEquals(Code.FAILED_PRECONDITION, assertThrows(CairnException.class, Profiler::stop).code());
  }

  @Test
  void dropsEventsPastMax() {
    try (CairnContext ctx = new CairnContext();
        Tensor x = Tensor.of(ctx, new float[] {1}, 1)) {
      Profiler.start(Profiler.options().maxEvents(2).vulkanTimestamps(false));
      for (int i = 0; i < 5; ++i) Ops.add(ctx, x, x).close();
      try (Profile p = Profiler.stop()) {
        assertEquals(2, p.eventCount());
        assertEquals(3, p.dropped());
      }
    }
    assertEquals(Code.INVALID_ARGUMENT,
        assertThrows(CairnException.class, () -> Profiler.start(Profiler.options().maxEvents(0))).code());
  }
}
