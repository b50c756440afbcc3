package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class OpsTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  @Test
  void addBroadcasts() {
    try (Tensor a = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Tensor b = Tensor.of(ctx, new float[] {10, 20, 30}, 3);
        Tensor c = Ops.add(ctx, a, b);
        Tensor s = Tensor.scalar(ctx, 100f);
        Tensor d = Ops.add(ctx, s, b)) {
      assertArrayEquals(new long[] {2, 3}, c.shape());
      assertArrayEquals(new float[] {11, 22, 33, 14, 25, 36}, c.toFloatArray());
      assertArrayEquals(new float[] {110, 120, 130}, d.toFloatArray());
    }
  }

  @Test
  void matMulWithTransposeA() {
    // a is 3x2, so a^T (2x3) times b (3x2) is 2x2.
    try (Tensor a = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 3, 2);
        Tensor b = Tensor.of(ctx, new float[] {1, 0, 0, 1, 1, 1}, 3, 2);
        Tensor c = Ops.matMul(ctx, a, b, Ops.MatMulAttrs.builder().transposeA(true));
        Tensor v = Tensor.of(ctx, new float[] {1, 2}, 2, 1);
        Tensor plain = Ops.matMul(ctx, b, v)) {
      assertArrayEquals(new long[] {2, 2}, c.shape());
      // a^T = [[1,3,5],[2,4,6]]
      assertArrayEquals(new float[] {1 + 5, 3 + 5, 2 + 6, 4 + 6}, c.toFloatArray());
      assertArrayEquals(new float[] {1, 2, 3}, plain.toFloatArray());
    }
  }

  @Test
  void attrClassesHoldOnlyWhatWasSet() {
    Ops.MatMulAttrs attrs = Ops.MatMulAttrs.builder();
    assertNull(attrs.transposeA()); // not sent: the op's own default applies
    assertNull(attrs.transposeB());
    assertTrue(attrs.transposeB(true).transposeB());
    assertFalse(Ops.EqualAttrs.builder().incompatibleShapeError(false).incompatibleShapeError());
    assertNull(Ops.EqualAttrs.builder().incompatibleShapeError());
  }

  @Test
  void requiredAttrsAreParameters() {
    try (Tensor x = Tensor.of(ctx, new float[] {1.7f, -2.5f}, 2);
        Tensor i = Ops.cast(ctx, x, DType.INT32);
        Tensor h = Ops.cast(ctx, x, DType.FLOAT16, Ops.CastAttrs.builder().truncate(true))) {
      assertEquals(DType.INT32, i.dtype());
      assertArrayEquals(new int[] {1, -2}, i.toIntArray());
      assertEquals(DType.FLOAT16, h.dtype());
    }
  }

  @Test
  void boolOutputsAndOptionalBoolAttrs() {
    try (Tensor a = Tensor.of(ctx, new int[] {1, 2, 3}, 3);
        Tensor b = Tensor.of(ctx, new int[] {1, 5}, 2);
        Tensor c = Tensor.of(ctx, new int[] {3, 2, 1}, 3);
        Tensor eq = Ops.equal(ctx, a, c);
        Tensor lenient = Ops.equal(ctx, a, b, Ops.EqualAttrs.builder().incompatibleShapeError(false))) {
      assertArrayEquals(new boolean[] {false, true, false}, eq.toBooleanArray());
      assertEquals(DType.BOOL, lenient.dtype());
      assertArrayEquals(new boolean[] {false}, lenient.toBooleanArray());
      CairnException e = assertThrows(CairnException.class, () -> Ops.equal(ctx, a, b));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
    }
  }

  @Test
  void variadicInputs() {
    try (Tensor a = Tensor.of(ctx, new long[] {1, 2}, 2);
        Tensor b = Tensor.of(ctx, new long[] {10, 20}, 2);
        Tensor sum = Ops.addN(ctx, a, b, a)) {
      assertArrayEquals(new long[] {12, 24}, sum.toLongArray());
    }
  }

  @Test
  void badShapesBecomeInvalidArgumentWithTheCMessage() {
    try (Tensor a = Tensor.of(ctx, new float[6], 2, 3);
        Tensor b = Tensor.of(ctx, new float[4], 4)) {
      CairnException e = assertThrows(CairnException.class, () -> Ops.add(ctx, a, b));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertEquals("INVALID_ARGUMENT: Add: incompatible shapes [2,3] and [4]", e.getMessage());
      assertEquals("Add: incompatible shapes [2,3] and [4]", e.detail());
    }
  }

  // Ops with one output, one to three inputs and no attributes run through the one-call fast
  // path (CairnContext.run1, OpNative.run): results, errors and handle counts as on the general path.
  @Test
  void fastPathRunsOneTwoAndThreeInputOps() throws InterruptedException {
    long baseline = settledLiveHandles();
    try (Tensor a = Tensor.of(ctx, new float[] {1, -2, 3}, 3);
        Tensor b = Tensor.of(ctx, new float[] {10, 20, 30}, 3);
        Tensor cond = Tensor.of(ctx, new boolean[] {true, false, true}, 3)) {
      for (int i = 0; i < 3; ++i) {
        try (Tensor n = Ops.neg(ctx, a);
            Tensor s = Ops.add(ctx, a, b);
            Tensor w = Ops.selectV2(ctx, cond, a, b)) {
          assertEquals(baseline + 6, NativeHandle.liveHandles());
          assertArrayEquals(new float[] {-1, 2, -3}, n.toFloatArray());
          assertArrayEquals(new float[] {11, 18, 33}, s.toFloatArray());
          assertArrayEquals(new float[] {1, 20, 3}, w.toFloatArray());
        }
      }
      assertEquals(baseline + 3, NativeHandle.liveHandles());
      // A failed op makes no tensor.
      try (Tensor c = Tensor.of(ctx, new float[4], 4)) {
        assertThrows(CairnException.class, () -> Ops.add(ctx, a, c));
        assertThrows(CairnException.class, () -> Ops.selectV2(ctx, cond, a, c));
        assertEquals(baseline + 4, NativeHandle.liveHandles());
      }
      NullPointerException npe = assertThrows(NullPointerException.class, () -> Ops.add(ctx, a, null));
      assertEquals("input 1 is null", npe.getMessage());
      npe = assertThrows(NullPointerException.class, () -> Ops.selectV2(ctx, cond, a, null));
      assertEquals("input 2 is null", npe.getMessage());
      Tensor closed = Ops.neg(ctx, a);
      closed.close();
      closed.close(); // twice is harmless
      ClosedAssert.assertClosed("FAILED_PRECONDITION: Ops.add: tensor is closed", () -> Ops.add(ctx, a, closed));
      ClosedAssert.assertClosed("FAILED_PRECONDITION: Ops.neg: tensor is closed", () -> Ops.neg(ctx, closed));
      assertEquals(baseline + 3, NativeHandle.liveHandles());
    }
    assertEquals(baseline, NativeHandle.liveHandles());
    CairnContext other = new CairnContext();
    try (Tensor x = Tensor.of(other, new float[] {1}, 1)) {
      other.close();
      ClosedAssert.assertClosed("FAILED_PRECONDITION: Ops.neg: context is closed", () -> Ops.neg(other, x));
    }
  }

  // The live handle count once what earlier tests dropped has been collected and freed.
  static long settledLiveHandles() throws InterruptedException {
    long last = -1;
    for (int quiet = 0; quiet < 3; ) {
      System.gc();
      Thread.sleep(20);
      long now = NativeHandle.liveHandles();
      quiet = now == last ? quiet + 1 : 0;
      last = now;
    }
    return last;
  }

  @Test
  void wrongDtypesAreInvalidArguments() {
    try (Tensor a = Tensor.of(ctx, new float[] {1}, 1);
        Tensor b = Tensor.of(ctx, new int[] {1}, 1)) {
      CairnException e = assertThrows(CairnException.class, () -> Ops.add(ctx, a, b));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().startsWith("INVALID_ARGUMENT: Add:"), e.getMessage());
    }
  }

  @Test
  void runByNameWithUntypedAttrs() {
    try (Tensor a = Tensor.of(ctx, new float[] {1, 2, 3, 4}, 2, 2)) {
      Tensor[] out = ctx.run("MatMul", new Tensor[] {a, a}, new OpAttrs().setBool("transpose_b", true), 1);
      try (Tensor c = out[0]) {
        assertArrayEquals(new float[] {5, 11, 11, 25}, c.toFloatArray());
      }
      CairnException unknown = assertThrows(CairnException.class, () -> ctx.run("NoSuchOp", new Tensor[] {a}, null, 1));
      assertEquals(Code.NOT_FOUND, unknown.code());
      // Every attribute kind crosses the boundary; the op rejects names it does not have.
      OpAttrs all =
          new OpAttrs()
              .setInt("i", 1)
              .setFloat("f", 2)
              .setBool("b", true)
              .setInts("axis", 0, 1)
              .setString("s", "text")
              .setDType("d", DType.FLOAT32)
              .setFloats("fs", 1.5, 2.5);
      assertEquals(7, all.size());
      CairnException e = assertThrows(CairnException.class, () -> ctx.run("Neg", new Tensor[] {a}, all, 1));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("Neg"), e.getMessage());
      CairnException count = assertThrows(CairnException.class, () -> ctx.run("Neg", new Tensor[] {a}, null, 2));
      assertEquals(Code.INVALID_ARGUMENT, count.code());
    }
  }

  @Test
  void intsAttributesThroughTheGeneratedWrappers() {
    try (Tensor a = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Tensor r = Ops.reshape(ctx, a, 3, 2);
        Tensor inferred = Ops.reshape(ctx, a, -1);
        Tensor rows = Ops.sum(ctx, a, Ops.SumAttrs.builder().axis(1));
        Tensor kept = Ops.sum(ctx, a, Ops.SumAttrs.builder().axis(0).keepDims(true));
        Tensor all = Ops.sum(ctx, a);
        Tensor t = Ops.transpose(ctx, a, Ops.TransposeAttrs.builder().perm(1, 0))) {
      assertArrayEquals(new long[] {3, 2}, r.shape());
      assertArrayEquals(a.toFloatArray(), r.toFloatArray());
      assertArrayEquals(new long[] {6}, inferred.shape());
      assertArrayEquals(new float[] {6, 15}, rows.toFloatArray());
      assertArrayEquals(new long[] {1, 3}, kept.shape());
      assertArrayEquals(new float[] {5, 7, 9}, kept.toFloatArray());
      assertEquals(0, all.rank());
      assertArrayEquals(new float[] {21}, all.toFloatArray());
      assertArrayEquals(new long[] {3, 2}, t.shape());
      assertArrayEquals(new float[] {1, 4, 2, 5, 3, 6}, t.toFloatArray());
      CairnException e = assertThrows(CairnException.class, () -> Ops.reshape(ctx, a, 4, 2));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().startsWith("INVALID_ARGUMENT: Reshape"), e.getMessage());
    }
  }

  @Test
  void variadicOutputsTakeTheirCountFromTheCApi() {
    try (Tensor a = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3)) {
      Tensor[] parts = Ops.split(ctx, a, 3, Ops.SplitAttrs.builder().axis(1));
      assertEquals(3, parts.length);
      for (int i = 0; i < 3; ++i) {
        try (Tensor p = parts[i]) {
          assertArrayEquals(new long[] {2, 1}, p.shape());
          assertArrayEquals(new float[] {1 + i, 4 + i}, p.toFloatArray());
        }
      }
      Tensor[] rows = Ops.unpack(ctx, a, 2);
      assertEquals(2, rows.length);
      try (Tensor r0 = rows[0];
          Tensor r1 = rows[1]) {
        assertArrayEquals(new float[] {1, 2, 3}, r0.toFloatArray());
        assertArrayEquals(new float[] {4, 5, 6}, r1.toFloatArray());
      }
      Tensor[] byName = ctx.run("Split", new Tensor[] {a}, new OpAttrs().setInt("num_split", 2));
      assertEquals(2, byName.length);
      for (Tensor p : byName) p.close();
      Tensor[] one = ctx.run("Neg", new Tensor[] {a}, null);
      assertEquals(1, one.length);
      one[0].close();
    }
    assertEquals(4, Cairn.numOutputs("Split", new OpAttrs().setInt("num_split", 4)));
    assertEquals(2, Cairn.numOutputs("TopKV2", new OpAttrs().setInt("k", 1)));
    assertEquals(1, Cairn.numOutputs("Add", null));
    assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> Cairn.numOutputs("NoSuchOp", null)).code());
    CairnException missing = assertThrows(CairnException.class, () -> Cairn.numOutputs("Split", null));
    assertEquals(Code.INVALID_ARGUMENT, missing.code());
    assertTrue(missing.getMessage().contains("num_split"), missing.getMessage());
  }

  @Test
  void listsTheOpRegistry() {
    List<String> names = Cairn.opNames();
    assertTrue(names.contains("Add"));
    assertTrue(names.contains("MatMul"));
    String json = Cairn.opRegistryJson();
    assertTrue(json.startsWith("["), json.substring(0, 20));
    assertTrue(json.contains("\"name\":\"MatMul\""));
    assertTrue(json.contains("transpose_a"));
  }
}
