package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Summaries: every kind, the default writer and step, summaries recorded inside a compiled
 * function, errors; event files are read back with the binding's own RecordReader.
 */
class SummaryTest {
  @TempDir Path dir;
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    SummaryWriter.clearDefault();
    SummaryWriter.setStep(SummaryWriter.DEFAULT_STEP);
    ctx.close();
  }

  // Records in the event file (the first is the file_version event).
  private static long records(String path) {
    long n = 0;
    try (RecordReader r = RecordReader.open(path)) {
      for (byte[] b : r) ++n;
      assertFalse(r.partial());
    }
    return n;
  }

  @Test
  void writesEveryKind() throws Exception {
    String path;
    try (SummaryWriter w = SummaryWriter.create(dir.resolve("run").toString(),
             SummaryWriter.options().maxQueue(4).flushMillis(0).filenameSuffix(".java"));
        Tensor scalar = Tensor.scalar(ctx, 0.5f);
        Tensor values = Tensor.of(ctx, new float[] {1, 2, 2, 3, 7}, 5);
        Tensor image = Tensor.ofUint8(ctx, new byte[2 * 4 * 3 * 3], 2, 4, 3, 3);
        Tensor audio = Tensor.of(ctx, new float[] {0, 0.5f, -0.5f, 1}, 1, 4, 1);
        CompiledFunction fn = CompiledFunction.create(ctx, "double", 1, (c, in) -> new Tensor[] {Ops.add(c, in[0], in[0])})) {
      path = w.path();
      assertTrue(path.startsWith(dir.resolve("run").resolve("events.out.tfevents.").toString()), path);
      assertTrue(path.endsWith(".java"), path);
      w.scalar("loss", 0.25, 1);
      w.text("note", "hello", 1);
      w.scalar(ctx, "t", scalar, 2);
      w.histogram(ctx, "h", values, 0, 2);
      w.image(ctx, "img", image, -1, 2);
      w.audio(ctx, "clip", audio, 8000, 1, 2);
      fn.call(scalar)[0].close();
      w.graph(fn, 0, 0);
      assertEquals(Code.OUT_OF_RANGE, assertThrows(CairnException.class, () -> w.graph(fn, 5, 0)).code());
      w.flush();
      assertEquals(1 + 7, records(path));
    }
    assertEquals(1 + 7, records(path));
  }

  @Test
  void defaultWriterAndStep() {
    SummaryWriter.scalarDefault("nowhere", 1, 1); // no default writer: nothing, no error
    CairnException e = assertThrows(CairnException.class, () -> {
      try (SummaryWriter w = SummaryWriter.create(dir.toString())) {
        w.scalar("nostep", 1, SummaryWriter.DEFAULT_STEP);
      }
    });
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("nostep"), e.getMessage());

    assertEquals(SummaryWriter.DEFAULT_STEP, SummaryWriter.step());
    SummaryWriter.setStep(5);
    assertEquals(5, SummaryWriter.step());
    try (SummaryWriter w = SummaryWriter.create(dir.resolve("d").toString());
        Tensor one = Tensor.scalar(ctx, 1.0)) {
      w.setDefault();
      SummaryWriter.scalarDefault("a", 1, SummaryWriter.DEFAULT_STEP);
      SummaryWriter.scalarDefault(ctx, "b", one, SummaryWriter.DEFAULT_STEP);
      SummaryWriter.clearDefault();
      SummaryWriter.scalarDefault("c", 1, 1);
      w.flush();
      assertEquals(3, records(w.path()));
    }
  }

  @Test
  void compiledFunctionLogsOnEveryCall() {
    try (SummaryWriter w = SummaryWriter.create(dir.toString(), SummaryWriter.options().flushMillis(0));
        CompiledFunction fn = CompiledFunction.create(ctx, "logged", 1, (c, in) -> {
          try (Tensor sum = Ops.sum(c, in[0])) {
            w.scalar(c, "sum", sum, SummaryWriter.DEFAULT_STEP);
            w.histogram(c, "values", in[0], 4, SummaryWriter.DEFAULT_STEP);
          }
          return new Tensor[] {Ops.mul(c, in[0], in[0])};
        });
        Tensor x = Tensor.of(ctx, new float[] {1, 2, 3}, 3)) {
      for (long step = 0; step < 4; ++step) {
        SummaryWriter.setStep(step);
        for (Tensor t : fn.call(x)) t.close();
      }
      assertEquals(1, fn.numTraces());
      w.flush();
      assertEquals(1 + 2 * 4, records(w.path()));
    }
  }

  @Test
  void errorsNameTheTagAndClosedWriterFails() throws Exception {
    SummaryWriter w = SummaryWriter.create(dir.toString());
    try (Tensor v = Tensor.of(ctx, new float[] {1, 2}, 2)) {
      CairnException e = assertThrows(CairnException.class, () -> w.scalar(ctx, "not_scalar", v, 1));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("not_scalar"), e.getMessage());
    }
    try (Tensor nan = Tensor.of(ctx, new float[] {Float.NaN}, 1)) {
      CairnException e = assertThrows(CairnException.class, () -> w.histogram(ctx, "nan_hist", nan, 0, 1));
      assertTrue(e.getMessage().contains("nan_hist"), e.getMessage());
    }
    w.close();
    w.close();
    assertClosed("FAILED_PRECONDITION: SummaryWriter.scalar: summary writer is closed", () -> w.scalar("x", 1, 1));
    // A file in the way of the log directory.
    Path file = Files.writeString(dir.resolve("file"), "x");
    assertThrows(CairnException.class, () -> SummaryWriter.create(file.resolve("sub").toString()));
  }
}
