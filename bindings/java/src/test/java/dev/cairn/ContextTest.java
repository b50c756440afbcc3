package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ContextTest {
  @Test
  void defaultsToTheCpu() {
    try (CairnContext ctx = new CairnContext()) {
      assertEquals("cpu", ctx.device());
      assertEquals("CairnContext(cpu)", ctx.toString());
    }
  }

  @Test
  void takesOptions() {
    try (CairnContext ctx = new CairnContext(CairnContext.options().device("cpu").numThreads(2).seed(42))) {
      assertEquals("cpu", ctx.device());
    }
  }

  @Test
  void anUnknownDeviceIsNotFound() {
    CairnException e =
        assertThrows(CairnException.class, () -> new CairnContext(CairnContext.options().device("tpu")));
    assertEquals(Code.NOT_FOUND, e.code());
    assertTrue(e.getMessage().contains("tpu"), e.getMessage());
  }

  @Test
  void badOptionsAreInvalidArguments() {
    CairnException e =
        assertThrows(CairnException.class, () -> new CairnContext(CairnContext.options().numThreads(-1)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertEquals(3, e.rawCode());
    assertTrue(e.getMessage().contains("num_threads"), e.getMessage());
  }

  @Test
  void deliversLogMessagesToTheHandler() {
    List<String> messages = new CopyOnWriteArrayList<>();
    List<LogLevel> levels = new CopyOnWriteArrayList<>();
    CairnContext.Options options =
        CairnContext.options()
            .logLevel(LogLevel.INFO)
            .logHandler(
                (level, message) -> {
                  levels.add(level);
                  messages.add(message);
                });
    try (CairnContext ctx = new CairnContext(options)) {
      assertEquals("cpu", ctx.device());
      assertFalse(messages.isEmpty());
      assertTrue(messages.get(0).contains("context created"), messages.toString());
      assertEquals(LogLevel.INFO, levels.get(0));
    }
  }

  @Test
  void aThrowingLogHandlerDoesNotPropagate() {
    int[] calls = {0};
    CairnContext.Options options =
        CairnContext.options()
            .logLevel(LogLevel.DEBUG)
            .logHandler(
                (level, message) -> {
                  calls[0]++;
                  throw new IllegalStateException("handler failure");
                });
    try (CairnContext ctx = new CairnContext(options);
        Tensor a = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor b = Ops.add(ctx, a, a)) {
      assertTrue(calls[0] > 0);
      assertArrayEquals(new float[] {2, 4}, b.toFloatArray());
    }
  }

  @Test
  void theLogHandlerLivesUntilTheRuntimeReleasesIt(@TempDir Path dir) {
    // Objects and checkpoints keep the runtime alive after their context is closed, and may still
    // log; the glue unregisters the handler when the runtime calls log_release.
    List<String> messages = new CopyOnWriteArrayList<>();
    int before = Callbacks.registeredLogFnCount();
    CairnContext ctx = new CairnContext(CairnContext.options().logHandler((level, message) -> messages.add(message)));
    assertEquals(before + 1, Callbacks.registeredLogFnCount());
    String path = dir.resolve("ckpt").toString();
    Trackable t = Trackable.create(ctx);
    try (Tensor one = Tensor.scalar(ctx, 1f);
        Variable v = Variable.create(ctx, one)) {
      t.set("v", v);
    }
    try (Checkpoint c = Checkpoint.create(ctx, "t", t)) {
      c.write(path);
    }
    Checkpoint empty = Checkpoint.create(ctx);
    RestoreStatus status = empty.restore(path); // t/v has nowhere to go
    ctx.close();
    assertEquals(before + 1, Callbacks.registeredLogFnCount(), "objects keep the runtime alive");
    status.close();
    empty.close(); // the restore ends: a warning names what was never restored
    assertTrue(
        messages.stream().anyMatch(m -> m.contains("never restored") && m.contains("t/v")), messages.toString());
    assertEquals(before + 1, Callbacks.registeredLogFnCount());
    t.close(); // the last object: the runtime goes, and with it the handler
    assertEquals(before, Callbacks.registeredLogFnCount());
  }

  @Test
  void aWarningLevelHandlerMissesInfo() {
    List<String> messages = new CopyOnWriteArrayList<>();
    try (CairnContext ctx = new CairnContext(CairnContext.options().logHandler((l, m) -> messages.add(m)))) {
      assertEquals("cpu", ctx.device());
      assertTrue(messages.isEmpty(), messages.toString());
    }
  }

  @Test
  void closeIsIdempotentAndUseAfterCloseThrows() {
    CairnContext ctx = new CairnContext();
    ctx.close();
    ctx.close();
    assertTrue(ctx.isClosed());
    assertClosed("FAILED_PRECONDITION: CairnContext.device: context is closed", ctx::device);
    assertClosed("FAILED_PRECONDITION: Tensor.of: context is closed", () -> Tensor.of(ctx, new float[] {1}));
    assertEquals("CairnContext(closed)", ctx.toString());
  }

  @Test
  void tensorsOutliveTheirContext() {
    Tensor t;
    try (CairnContext ctx = new CairnContext()) {
      t = Tensor.of(ctx, new int[] {1, 2, 3}, 3);
    }
    try (Tensor u = t) {
      assertArrayEquals(new int[] {1, 2, 3}, u.toIntArray());
      try (CairnContext other = new CairnContext();
          Tensor v = Ops.add(other, u, u)) {
        assertArrayEquals(new int[] {2, 4, 6}, v.toIntArray());
      }
    }
  }
}
