package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TensorTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static void assertShape(Tensor t, DType dtype, long... shape) {
    assertEquals(dtype, t.dtype());
    assertArrayEquals(shape, t.shape());
    assertEquals(shape.length, t.rank());
    long n = 1;
    for (long d : shape) n *= d;
    assertEquals(n, t.numElements());
    assertEquals(n * dtype.byteSize(), t.nbytes());
    assertEquals("cpu", t.device());
  }

  @Test
  void float32() {
    float[] data = {1.5f, -2, Float.NaN, Float.POSITIVE_INFINITY, 0, -0f};
    try (Tensor t = Tensor.of(ctx, data, 2, 3)) {
      assertShape(t, DType.FLOAT32, 2, 3);
      assertArrayEquals(data, t.toFloatArray());
      assertEquals("Tensor(float32[2,3], cpu)", t.toString());
    }
  }

  @Test
  void float64() {
    double[] data = {1e300, -1e-300, Math.PI};
    try (Tensor t = Tensor.of(ctx, data, 3, 1)) {
      assertShape(t, DType.FLOAT64, 3, 1);
      assertArrayEquals(data, t.toDoubleArray());
    }
  }

  @Test
  void int32() {
    int[] data = {Integer.MIN_VALUE, -1, 0, Integer.MAX_VALUE};
    try (Tensor t = Tensor.of(ctx, data, 2, 2)) {
      assertShape(t, DType.INT32, 2, 2);
      assertArrayEquals(data, t.toIntArray());
    }
  }

  @Test
  void int64() {
    long[] data = {Long.MIN_VALUE, Long.MAX_VALUE};
    try (Tensor t = Tensor.of(ctx, data, 2)) {
      assertShape(t, DType.INT64, 2);
      assertArrayEquals(data, t.toLongArray());
    }
  }

  @Test
  void int16() {
    short[] data = {Short.MIN_VALUE, 7, Short.MAX_VALUE};
    try (Tensor t = Tensor.of(ctx, data, 3)) {
      assertShape(t, DType.INT16, 3);
      assertArrayEquals(data, t.toShortArray());
    }
  }

  @Test
  void int8AndUint8() {
    byte[] data = {-128, -1, 0, 127};
    try (Tensor s = Tensor.of(ctx, data, 4);
        Tensor u = Tensor.ofUint8(ctx, data, 2, 2);
        Tensor wide = Ops.cast(ctx, u, DType.INT32)) {
      assertShape(s, DType.INT8, 4);
      assertShape(u, DType.UINT8, 2, 2);
      assertArrayEquals(data, s.toByteArray());
      assertArrayEquals(data, u.toByteArray());
      assertArrayEquals(new int[] {128, 255, 0, 127}, wide.toIntArray());
    }
  }

  @Test
  void bool() {
    boolean[] data = {true, false, false, true, true, false};
    try (Tensor t = Tensor.of(ctx, data, 3, 2);
        Tensor not = Ops.logicalNot(ctx, t)) {
      assertShape(t, DType.BOOL, 3, 2);
      assertArrayEquals(data, t.toBooleanArray());
      assertArrayEquals(new boolean[] {false, true, true, false, false, true}, not.toBooleanArray());
    }
  }

  @Test
  void float16AndBfloat16AsRawBits() {
    short[] halfBits = {0x3C00, (short) 0xC000, 0x3800}; // 1, -2, 0.5
    short[] bfloatBits = {0x3F80, (short) 0xC000, 0x3F00}; // 1, -2, 0.5
    try (Tensor h = Tensor.of(ctx, DType.FLOAT16, halfBits, 3);
        Tensor b = Tensor.of(ctx, DType.BFLOAT16, bfloatBits, 3);
        Tensor hf = Ops.cast(ctx, h, DType.FLOAT32);
        Tensor bf = Ops.cast(ctx, b, DType.FLOAT32)) {
      assertShape(h, DType.FLOAT16, 3);
      assertShape(b, DType.BFLOAT16, 3);
      assertArrayEquals(halfBits, h.toShortArray());
      assertArrayEquals(bfloatBits, b.toShortArray());
      assertArrayEquals(new float[] {1, -2, 0.5f}, hf.toFloatArray());
      assertArrayEquals(new float[] {1, -2, 0.5f}, bf.toFloatArray());
    }
  }

  @Test
  void complex64AsInterleavedFloats() {
    float[] data = {1, 2, 3, -4}; // 1+2i, 3-4i
    try (Tensor t = Tensor.of(ctx, DType.COMPLEX64, data, 2);
        Tensor sum = Ops.add(ctx, t, t)) {
      assertShape(t, DType.COMPLEX64, 2);
      assertArrayEquals(data, t.toFloatArray());
      assertArrayEquals(new float[] {2, 4, 6, -8}, sum.toFloatArray());
    }
  }

  @Test
  void everyDtypeThroughDirectBuffers() {
    for (DType dtype : DType.values()) {
      if (dtype == DType.INVALID_DTYPE || dtype == DType.STRING) continue;
      int n = 6 * (int) dtype.byteSize();
      ByteBuffer in = ByteBuffer.allocateDirect(n).order(ByteOrder.nativeOrder());
      for (int i = 0; i < n; ++i) in.put(i, (byte) (dtype == DType.BOOL ? i % 2 : i * 7 + 1));
      try (Tensor t = Tensor.fromBuffer(ctx, dtype, in, 3, 2)) {
        assertShape(t, dtype, 3, 2);
        ByteBuffer out = t.toByteBuffer();
        assertEquals(ByteOrder.nativeOrder(), out.order());
        assertEquals(in, out, dtype.toString());
      }
    }
  }

  @Test
  void buffersUseTheirRemainingBytes() {
    ByteBuffer in = ByteBuffer.allocateDirect(12).order(ByteOrder.nativeOrder());
    in.putInt(99).putInt(5).putInt(6);
    in.position(4);
    try (Tensor t = Tensor.fromBuffer(ctx, DType.INT32, in, 2)) {
      assertArrayEquals(new int[] {5, 6}, t.toIntArray());
      assertEquals(4, in.position());
      ByteBuffer out = ByteBuffer.allocateDirect(12).order(ByteOrder.nativeOrder());
      out.position(4);
      t.readInto(out);
      assertEquals(5, out.getInt(4));
      assertEquals(6, out.getInt(8));
    }
    ByteBuffer heap = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putFloat(1.5f).putFloat(-3);
    heap.flip();
    try (Tensor t = Tensor.of(ctx, DType.FLOAT32, heap, 2)) {
      assertArrayEquals(new float[] {1.5f, -3}, t.toFloatArray());
    }
  }

  @Test
  void scalarsAndEmptyTensors() {
    try (Tensor s = Tensor.scalar(ctx, 2.5f);
        Tensor l = Tensor.scalar(ctx, 7L);
        Tensor e = Tensor.of(ctx, new float[0], 0, 3)) {
      assertShape(s, DType.FLOAT32);
      assertArrayEquals(new float[] {2.5f}, s.toFloatArray());
      assertArrayEquals(new long[] {7}, l.toLongArray());
      assertShape(e, DType.FLOAT32, 0, 3);
      assertEquals(0, e.toFloatArray().length);
      assertEquals(0, e.toByteBuffer().capacity());
    }
  }

  @Test
  void aSizeThatDoesNotFitTheShapeIsAnInvalidArgument() {
    CairnException e = assertThrows(CairnException.class, () -> Tensor.of(ctx, new float[] {1, 2, 3}, 2, 2));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertEquals("INVALID_ARGUMENT: Tensor.of: 3 values for shape [2,2] (needs 4)", e.getMessage());
    CairnException neg = assertThrows(CairnException.class, () -> Tensor.of(ctx, new float[0], -1));
    assertEquals(Code.INVALID_ARGUMENT, neg.code());
    assertEquals("INVALID_ARGUMENT: Tensor.of: dimension 0 of shape [-1] is negative", neg.getMessage());
    CairnException bytes = assertThrows(CairnException.class,
        () -> Tensor.fromBuffer(ctx, DType.INT64, ByteBuffer.allocate(12), 2));
    assertEquals("INVALID_ARGUMENT: Tensor.fromBuffer: 12 bytes for a int64 tensor of shape [2] (needs 16)", bytes.getMessage());
    CairnException complex = assertThrows(CairnException.class, () -> Tensor.of(ctx, DType.COMPLEX64, new float[] {1, 2, 3}, 2));
    assertEquals("INVALID_ARGUMENT: Tensor.of: 3 values for shape [2] (needs 4)", complex.getMessage());
  }

  @Test
  void readingIntoTheWrongSizeIsAnInvalidArgument() {
    try (Tensor t = Tensor.of(ctx, new int[] {1, 2}, 2)) {
      CairnException e = assertThrows(CairnException.class, () -> t.readInto(ByteBuffer.allocateDirect(7)));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertEquals("INVALID_ARGUMENT: Tensor.readInto: a buffer of 7 bytes for a int32[2] tensor of 8 bytes", e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> t.readInto(ByteBuffer.allocate(8)));
    }
  }

  @Test
  void arraysMustMatchTheDtype() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Tensor.of(ctx, DType.INT32, new float[] {1}));
    assertTrue(e.getMessage().contains("int32"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Tensor.of(ctx, DType.FLOAT32, "text"));
    try (Tensor t = Tensor.of(ctx, new int[] {1}, 1)) {
      assertThrows(IllegalArgumentException.class, t::toFloatArray);
      assertThrows(IllegalArgumentException.class, t::toLongArray);
    }
  }

  @Test
  void stringTensorsCannotBeMadeFromBytes() {
    CairnException e =
        assertThrows(
            CairnException.class, () -> Tensor.fromBuffer(ctx, DType.STRING, ByteBuffer.allocateDirect(0), 0));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
  }

  @Test
  void closeIsIdempotentAndUseAfterCloseThrows() {
    Tensor t = Tensor.of(ctx, new float[] {1}, 1);
    t.close();
    t.close();
    assertTrue(t.isClosed());
    assertClosed("FAILED_PRECONDITION: Tensor.toFloatArray: tensor is closed", t::toFloatArray);
    assertClosed("FAILED_PRECONDITION: Ops.neg: tensor is closed", () -> Ops.neg(ctx, t));
    assertEquals("Tensor(closed)", t.toString());
  }

  @Test
  void copyToTheSameDeviceKeepsTheValue() {
    try (Tensor t = Tensor.of(ctx, new double[] {1, 2}, 2);
        Tensor u = t.copyTo(ctx, "cpu")) {
      assertArrayEquals(new double[] {1, 2}, u.toDoubleArray());
      CairnException e = assertThrows(CairnException.class, () -> t.copyTo(ctx, "nowhere"));
      assertEquals(Code.NOT_FOUND, e.code());
    }
  }
}
