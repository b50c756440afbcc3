package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

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
    assertThrows(IllegalStateException.class, ctx::device);
    assertThrows(IllegalStateException.class, () -> Tensor.of(ctx, new float[] {1}));
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
