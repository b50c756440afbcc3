package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Export and load of compiled functions: a round trip with a variable the function reads and
 * updates, NOT_FOUND for inputs the file has no graph for, bad files, GraphDef text, and the
 * status a throwing body hands the C library.
 */
class CompiledFunctionIoTest {
  private CairnContext ctx;
  @TempDir Path dir;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static float[] first(Tensor[] ts) {
    try {
      return ts[0].toFloatArray();
    } finally {
      for (Tensor t : ts) t.close();
    }
  }

  /** y = x * x + v, then v += x. */
  private CompiledFunction squarePlusVar(Variable v) {
    return CompiledFunction.create(ctx, "square_plus_var", 1, (c, in) -> {
      try (Tensor sq = Ops.mul(c, in[0], in[0]); Tensor vv = v.read()) {
        Tensor y = Ops.add(c, sq, vv);
        v.assignAdd(in[0]);
        return new Tensor[] {y};
      }
    });
  }

  @Test
  void exportedFunctionLoadsInAnotherContextAndStepsLikeTheOriginal() {
    String path = dir.resolve("square.cairnfn").toString();
    try (CairnContext ctx2 = new CairnContext();
        Tensor init = Tensor.of(ctx, new float[] {10, 20}, 2);
        Variable v = Variable.create(ctx, init);
        CompiledFunction f = squarePlusVar(v);
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor x2 = Tensor.of(ctx2, new float[] {1, 2}, 2)) {
      CairnException e = assertThrows(CairnException.class, () -> f.export(path));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      first(f.call(x)); // v becomes [11, 22]
      f.export(path);
      try (CompiledFunction loaded = CompiledFunction.load(ctx2, path, 1)) {
        assertEquals(0, loaded.numTraces());
        assertEquals(path, loaded.name());
        for (int i = 0; i < 3; ++i) {
          float[] want = {1 + 11 + i, 4 + 22 + 2 * i};
          assertArrayEquals(want, first(f.call(x)), "original, step " + i);
          assertArrayEquals(want, first(loaded.call(x2)), "loaded, step " + i);
        }
        try (Tensor now = v.read()) {
          assertArrayEquals(new float[] {14, 28}, now.toFloatArray()); // the copy never touched v
        }
        assertEquals(1, loaded.numTraces());
        assertEquals("float32[2]", loaded.signature(0));
        String again = dir.resolve("again.cairnfn").toString();
        loaded.export(again); // a loaded function exports again
        try (CompiledFunction reloaded = CompiledFunction.load(ctx, again, 1)) {
          assertArrayEquals(new float[] {1 + 14, 4 + 28}, first(reloaded.call(x)));
        }
      }
    }
  }

  @Test
  void inputsWithoutAStoredGraphAndBadFilesAreRefused() throws Exception {
    String path = dir.resolve("f.cairnfn").toString();
    try (Tensor init = Tensor.of(ctx, new float[] {0, 0}, 2);
        Variable v = Variable.create(ctx, init);
        CompiledFunction f = squarePlusVar(v);
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor x3 = Tensor.of(ctx, new float[] {1, 2, 3}, 3)) {
      first(f.call(x));
      f.export(path);
      try (CompiledFunction loaded = CompiledFunction.load(ctx, path, 1);
          CompiledFunction two = CompiledFunction.load(ctx, path, 2)) {
        CairnException e = assertThrows(CairnException.class, () -> loaded.call(x3));
        assertEquals(Code.NOT_FOUND, e.code());
        assertTrue(e.getMessage().contains("it has: (float32[2])"), e.getMessage());
        e = assertThrows(CairnException.class, () -> two.call(x));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("returns 1 output(s), not 2"), e.getMessage());
      }
      String missing = dir.resolve("missing.cairnfn").toString();
      CairnException e = assertThrows(CairnException.class, () -> CompiledFunction.load(ctx, missing, 1));
      assertEquals(Code.NOT_FOUND, e.code());
      byte[] bytes = Files.readAllBytes(Path.of(path));
      Path broken = dir.resolve("broken.cairnfn");
      Files.write(broken, java.util.Arrays.copyOf(bytes, bytes.length - 10));
      e = assertThrows(CairnException.class, () -> CompiledFunction.load(ctx, broken.toString(), 1));
      assertEquals(Code.DATA_LOSS, e.code());
    }
  }

  @Test
  void graphdefShowsTheInputsTheVariableAndItsUpdates() {
    try (Tensor init = Tensor.of(ctx, new float[] {0, 0}, 2);
        Variable v = Variable.create(ctx, init);
        CompiledFunction f = squarePlusVar(v);
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 2)) {
      assertEquals(Code.OUT_OF_RANGE, assertThrows(CairnException.class, () -> f.graphdef(0)).code());
      first(f.call(x));
      String text = f.graphdef(0);
      for (String want : new String[] {"node {", "op: \"Placeholder\"", "op: \"VarHandleOp\"",
               "op: \"ReadVariableOp\"", "op: \"AssignVariableOp\"", "op: \"Mul\"", "name: \"output_0\""}) {
        assertTrue(text.contains(want), "no " + want + " in\n" + text);
      }
      CairnException e = assertThrows(CairnException.class, () -> f.graphdef(1));
      assertTrue(e.getMessage().contains("has 1 trace(s)"), e.getMessage());
    }
  }

  @Test
  void aThrowingBodyHandsTheCLibraryItsCodeAndMessage() {
    try (CompiledFunction cairnError = CompiledFunction.create(ctx, "picky", 1, (c, in) -> {
          throw new CairnException(Code.OUT_OF_RANGE, "index 7 of 3");
        });
        CompiledFunction javaError = CompiledFunction.create(ctx, "fussy", 1, (c, in) -> {
          throw new IllegalStateException("not today");
        });
        Tensor x = Tensor.of(ctx, new float[] {1}, 1)) {
      // The raw layer sees the C library's status, not the Java classes' rethrown exception.
      long[] out = new long[1];
      CairnException e = assertThrows(CairnException.class,
          () -> CairnNative.functionCall(cairnError.handle(), new long[] {x.handle()}, out));
      assertEquals(Code.OUT_OF_RANGE, e.code());
      assertEquals("OUT_OF_RANGE: function 'picky': index 7 of 3", e.getMessage());
      Callbacks.takeHostError();
      e = assertThrows(CairnException.class,
          () -> CairnNative.functionCall(javaError.handle(), new long[] {x.handle()}, out));
      assertEquals(Code.UNKNOWN, e.code());
      assertEquals("UNKNOWN: function 'fussy': java.lang.IllegalStateException: not today", e.getMessage());
      Callbacks.takeHostError();
    }
  }
}
