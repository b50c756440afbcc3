package dev.cairn;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * An immutable tensor: a dtype, a shape and a buffer on a device. Safe to read from any thread.
 * Close it when done, or make it inside a {@link TensorScope}, which frees it when the scope
 * closes; a tensor garbage collected without {@link #close()} is freed by a daemon thread (the
 * binding's backstop, a phantom reference per handle), and the binding calls {@code System.gc()}
 * when the data of open tensors grew enough ({@link NativeMemory}). A tensor stays valid after
 * the context that made it is closed.
 *
 * <p>Java arrays map to dtypes like this: {@code float[]} FLOAT32 (or COMPLEX64 as interleaved
 * real and imaginary parts), {@code double[]} FLOAT64, {@code int[]} INT32, {@code long[]} INT64,
 * {@code short[]} INT16 (or the raw bits of FLOAT16 and BFLOAT16), {@code byte[]} INT8 or UINT8,
 * {@code boolean[]} BOOL. Any dtype also goes through a {@link ByteBuffer} holding the elements in
 * native byte order. Data is row-major, and its length must fit the shape (else a {@link
 * CairnException} INVALID_ARGUMENT such as {@code Tensor.of: 3 values for shape [2,2] (needs 4)}).
 */
public final class Tensor extends NativeHandle {
  // Immutable facts, fetched on first use (racing threads compute the same values; volatile so
  // that a thread seeing the array also sees its elements).
  private volatile DType dtype;
  private volatile long[] shape;

  // Set once the TensorScope it was made in freed it, for the error of a later use.
  private volatile boolean freedByScope;

  Tensor(long handle) {
    super(handle, CairnNative::tensorFree, CairnNative.tensorNbytes(handle));
    TensorScope.adopt(this);
  }

  /** Closes this for its {@link TensorScope}, which a later use's error then names. */
  void freeInScope() {
    if (isClosed()) return;
    freedByScope = true;
    close();
  }

  @Override
  void checkClosed() {
    if (isClosed()) {
      throw closedError(Tensor.class, freedByScope
          ? " (freed by its TensorScope: keep it to use it after the scope closes)" : "");
    }
  }

  // ---- creation ----

  /**
   * A FLOAT32 tensor of {@code shape} (no dimensions: a scalar) holding a copy of {@code data}.
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return a FLOAT32 tensor of {@code shape} (no dimensions: a scalar) holding a copy of {@code data}
   */
  public static Tensor of(CairnContext ctx, float[] data, long... shape) {
    return of(ctx, DType.FLOAT32, data, shape);
  }

  /**
   * A FLOAT64 tensor.
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return a FLOAT64 tensor
   */
  public static Tensor of(CairnContext ctx, double[] data, long... shape) {
    return of(ctx, DType.FLOAT64, data, shape);
  }

  /**
   * An INT32 tensor.
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return an INT32 tensor
   */
  public static Tensor of(CairnContext ctx, int[] data, long... shape) {
    return of(ctx, DType.INT32, data, shape);
  }

  /**
   * An INT64 tensor.
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return an INT64 tensor
   */
  public static Tensor of(CairnContext ctx, long[] data, long... shape) {
    return of(ctx, DType.INT64, data, shape);
  }

  /**
   * An INT16 tensor.
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return an INT16 tensor
   */
  public static Tensor of(CairnContext ctx, short[] data, long... shape) {
    return of(ctx, DType.INT16, data, shape);
  }

  /**
   * An INT8 tensor (see {@link #ofUint8} for UINT8).
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return an INT8 tensor (see {@link #ofUint8} for UINT8)
   */
  public static Tensor of(CairnContext ctx, byte[] data, long... shape) {
    return of(ctx, DType.INT8, data, shape);
  }

  /**
   * A UINT8 tensor: each byte is read as unsigned (0..255).
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return a UINT8 tensor: each byte is read as unsigned (0..255)
   */
  public static Tensor ofUint8(CairnContext ctx, byte[] data, long... shape) {
    return of(ctx, DType.UINT8, data, shape);
  }

  /**
   * A BOOL tensor.
   *
   * @param ctx the context
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return a BOOL tensor
   */
  public static Tensor of(CairnContext ctx, boolean[] data, long... shape) {
    return of(ctx, DType.BOOL, data, shape);
  }

  /**
   * A FLOAT32 scalar.
   *
   * @param ctx the context
   * @param value the value to set
   * @return a FLOAT32 scalar
   */
  public static Tensor scalar(CairnContext ctx, float value) {
    return of(ctx, new float[] {value});
  }

  /**
   * A FLOAT64 scalar.
   *
   * @param ctx the context
   * @param value the value to set
   * @return a FLOAT64 scalar
   */
  public static Tensor scalar(CairnContext ctx, double value) {
    return of(ctx, new double[] {value});
  }

  /**
   * An INT32 scalar.
   *
   * @param ctx the context
   * @param value the value to set
   * @return an INT32 scalar
   */
  public static Tensor scalar(CairnContext ctx, int value) {
    return of(ctx, new int[] {value});
  }

  /**
   * An INT64 scalar.
   *
   * @param ctx the context
   * @param value the value to set
   * @return an INT64 scalar
   */
  public static Tensor scalar(CairnContext ctx, long value) {
    return of(ctx, new long[] {value});
  }

  /**
   * A BOOL scalar.
   *
   * @param ctx the context
   * @param value the value to set
   * @return a BOOL scalar
   */
  public static Tensor scalar(CairnContext ctx, boolean value) {
    return of(ctx, new boolean[] {value});
  }

  /**
   * A tensor of any dtype from a Java array that can hold its elements (see the class comment)
   * or a {@link ByteBuffer} (its remaining bytes, in native byte order).
   *
   * @param ctx the context
   * @param dtype the element type
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return a new tensor, which the caller closes
   */
  public static Tensor of(CairnContext ctx, DType dtype, Object data, long... shape) {
    if (dtype == null) throw new NullPointerException("dtype");
    if (data == null) throw new NullPointerException("data");
    if (data instanceof ByteBuffer) return fromBuffer(ctx, dtype, (ByteBuffer) data, shape);
    ArrayKind kind = ArrayKind.of(data);
    kind.check(dtype, "create");
    long[] dims = shape == null ? new long[0] : shape;
    long needed = elementCount("Tensor.of", dims) * (dtype == DType.COMPLEX64 ? 2 : 1);
    int given = java.lang.reflect.Array.getLength(data);
    if (given != needed) {
      throw new CairnException(Code.INVALID_ARGUMENT,
          "Tensor.of: " + given + " values for shape " + shapeString(dims) + " (needs " + needed + ")");
    }
    long c = ctx.handle();
    int d = dtype.value();
    long h;
    try {
      switch (kind) {
        case FLOAT: h = CairnNative.tensorCreate(c, d, dims, (float[]) data); break;
        case DOUBLE: h = CairnNative.tensorCreate(c, d, dims, (double[]) data); break;
        case INT: h = CairnNative.tensorCreate(c, d, dims, (int[]) data); break;
        case LONG: h = CairnNative.tensorCreate(c, d, dims, (long[]) data); break;
        case SHORT: h = CairnNative.tensorCreate(c, d, dims, (short[]) data); break;
        case BYTE: h = CairnNative.tensorCreate(c, d, dims, (byte[]) data); break;
        case BOOLEAN: h = CairnNative.tensorCreate(c, d, dims, (boolean[]) data); break;
        default: throw new AssertionError(kind);
      }
    } finally {
      Reference.reachabilityFence(ctx);
    }
    return new Tensor(h);
  }

  /**
   * A tensor of any dtype from the remaining bytes of {@code data} (elements in native byte
   * order, see {@link ByteOrder#nativeOrder()}). A direct buffer is read in place; a heap buffer
   * is copied first. The buffer's position is not changed.
   *
   * @param ctx the context
   * @param dtype the element type
   * @param data the elements, row-major
   * @param shape the dimensions (none for a scalar)
   * @return a new tensor, which the caller closes
   */
  public static Tensor fromBuffer(CairnContext ctx, DType dtype, ByteBuffer data, long... shape) {
    if (dtype == null) throw new NullPointerException("dtype");
    if (data == null) throw new NullPointerException("data");
    long[] dims = shape == null ? new long[0] : shape;
    long count = elementCount("Tensor.fromBuffer", dims);
    long size = dtype.byteSize();
    if (size > 0 && data.remaining() != count * size) {
      throw new CairnException(Code.INVALID_ARGUMENT,
          "Tensor.fromBuffer: " + data.remaining() + " bytes for a " + dtype.cName() + " tensor of shape "
              + shapeString(dims) + " (needs " + count * size + ")");
    }
    long c = ctx.handle();
    long h;
    try {
      if (data.isDirect()) {
        h = CairnNative.tensorCreate(c, dtype.value(), dims, data.slice());
      } else {
        byte[] bytes = new byte[data.remaining()];
        data.duplicate().get(bytes);
        h = CairnNative.tensorCreate(c, dtype.value(), dims, bytes);
      }
    } finally {
      Reference.reachabilityFence(ctx);
    }
    return new Tensor(h);
  }

  // The element count of `dims`; INVALID_ARGUMENT naming `method` for a negative dimension or an
  // overflowing count.
  private static long elementCount(String method, long[] dims) {
    long n = 1;
    for (int i = 0; i < dims.length; ++i) {
      if (dims[i] < 0) {
        throw new CairnException(Code.INVALID_ARGUMENT,
            method + ": dimension " + i + " of shape " + shapeString(dims) + " is negative");
      }
      try {
        n = Math.multiplyExact(n, dims[i]);
      } catch (ArithmeticException e) {
        throw new CairnException(Code.INVALID_ARGUMENT, method + ": shape " + shapeString(dims) + " is too large");
      }
    }
    return n;
  }

  static String shapeString(long[] dims) {
    return Arrays.toString(dims).replace(" ", "");
  }

  // ---- facts ----

  /**
   * The element type.
   *
   * @return the dtype
   */
  public DType dtype() {
    DType d = dtype;
    if (d == null) {
      int raw = CairnNative.tensorDtype(handle());
      Reference.reachabilityFence(this);
      d = DType.fromValue(raw);
      if (d == null) throw new IllegalStateException("the tensor has a dtype this binding does not know: " + raw);
      dtype = d;
    }
    return d;
  }

  /**
   * The dimensions (a copy).
   *
   * @return the dimensions (a copy)
   */
  public long[] shape() {
    return shapeRef().clone();
  }

  private long[] shapeRef() {
    long[] s = shape;
    if (s == null) {
      long h = handle();
      try {
        s = new long[(int) CairnNative.tensorRank(h)];
        for (int i = 0; i < s.length; ++i) s[i] = CairnNative.tensorDim(h, i);
      } finally {
        Reference.reachabilityFence(this);
      }
      shape = s;
    }
    return s;
  }

  /**
   * The number of dimensions.
   *
   * @return the rank (0 for a scalar)
   */
  public int rank() {
    return shapeRef().length;
  }

  /**
   * The number of elements; 1 for a scalar.
   *
   * @return the number of elements; 1 for a scalar
   */
  public long numElements() {
    long n = 1;
    for (long d : shapeRef()) n *= d;
    return n;
  }

  /**
   * The size of the data in bytes.
   *
   * @return the size of the data in bytes
   */
  public long nbytes() {
    long h = handle();
    try {
      return CairnNative.tensorNbytes(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The device holding the tensor, e.g. "cpu".
   *
   * @return the device holding the tensor
   */
  public String device() {
    long h = handle();
    try {
      return CairnNative.tensorDevice(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  // ---- reading ----

  /**
   * The elements of a FLOAT32 tensor (or a COMPLEX64 one, as interleaved real and imaginary parts).
   *
   * @return the elements of a FLOAT32 tensor (or a COMPLEX64 one, as interleaved real and imaginary parts)
   */
  public float[] toFloatArray() {
    float[] out = new float[length(ArrayKind.FLOAT, "toFloatArray")];
    long h = handle();
    try {
      CairnNative.tensorRead(h, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return out;
  }

  /**
   * The elements of a FLOAT64 tensor.
   *
   * @return the elements of a FLOAT64 tensor
   */
  public double[] toDoubleArray() {
    double[] out = new double[length(ArrayKind.DOUBLE, "toDoubleArray")];
    long h = handle();
    try {
      CairnNative.tensorRead(h, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return out;
  }

  /**
   * The elements of an INT32 tensor.
   *
   * @return the elements of an INT32 tensor
   */
  public int[] toIntArray() {
    int[] out = new int[length(ArrayKind.INT, "toIntArray")];
    long h = handle();
    try {
      CairnNative.tensorRead(h, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return out;
  }

  /**
   * The elements of an INT64 tensor.
   *
   * @return the elements of an INT64 tensor
   */
  public long[] toLongArray() {
    long[] out = new long[length(ArrayKind.LONG, "toLongArray")];
    long h = handle();
    try {
      CairnNative.tensorRead(h, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return out;
  }

  /**
   * The elements of an INT16 tensor, or the raw bits of a FLOAT16 or BFLOAT16 one.
   *
   * @return the elements of an INT16 tensor, or the raw bits of a FLOAT16 or BFLOAT16 one
   */
  public short[] toShortArray() {
    short[] out = new short[length(ArrayKind.SHORT, "toShortArray")];
    long h = handle();
    try {
      CairnNative.tensorRead(h, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return out;
  }

  /**
   * The elements of an INT8 or UINT8 tensor (for UINT8, use {@code b & 0xff}).
   *
   * @return the elements of an INT8 or UINT8 tensor (for UINT8, use {@code b & 0xff})
   */
  public byte[] toByteArray() {
    byte[] out = new byte[length(ArrayKind.BYTE, "toByteArray")];
    long h = handle();
    try {
      CairnNative.tensorRead(h, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return out;
  }

  /**
   * The elements of a BOOL tensor.
   *
   * @return the elements of a BOOL tensor
   */
  public boolean[] toBooleanArray() {
    boolean[] out = new boolean[length(ArrayKind.BOOLEAN, "toBooleanArray")];
    long h = handle();
    try {
      CairnNative.tensorRead(h, out);
    } finally {
      Reference.reachabilityFence(this);
    }
    return out;
  }

  /**
   * The data of a tensor of any dtype in a new direct buffer in native byte order.
   *
   * @return the data of a tensor of any dtype in a new direct buffer in native byte order
   */
  public ByteBuffer toByteBuffer() {
    long n = nbytes();
    if (n > Integer.MAX_VALUE) throw new IllegalStateException("the tensor's " + n + " bytes do not fit a ByteBuffer");
    ByteBuffer out = ByteBuffer.allocateDirect((int) n).order(ByteOrder.nativeOrder());
    readInto(out);
    return out;
  }

  /**
   * Copies the data into the remaining bytes of a direct buffer, which must be exactly {@link
   * #nbytes()} long (else INVALID_ARGUMENT). The buffer's position is not changed.
   *
   * @param dst a direct buffer of exactly nbytes() remaining bytes
   */
  public void readInto(ByteBuffer dst) {
    if (dst == null) throw new NullPointerException("dst");
    if (!dst.isDirect()) throw new IllegalArgumentException("readInto needs a direct ByteBuffer");
    if (dst.isReadOnly()) throw new IllegalArgumentException("readInto needs a writable ByteBuffer");
    long h = handle();
    long n = nbytes();
    if (dst.remaining() != n) {
      throw new CairnException(Code.INVALID_ARGUMENT,
          "Tensor.readInto: a buffer of " + dst.remaining() + " bytes for a " + dtype().cName()
              + shapeString(shapeRef()) + " tensor of " + n + " bytes");
    }
    try {
      CairnNative.tensorRead(h, dst.slice());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  private int length(ArrayKind kind, String what) {
    kind.check(dtype(), what);
    long n = numElements() * (dtype() == DType.COMPLEX64 ? 2 : 1);
    if (n > Integer.MAX_VALUE - 8) throw new IllegalStateException("the tensor's " + n + " elements do not fit a Java array");
    return (int) n;
  }

  // ---- other ----

  /**
   * The same value on {@code device} ("cpu", "vulkan", "vulkan:N"), as a new tensor.
   *
   * @param ctx the context
   * @param device the device name: "cpu", "vulkan" or "vulkan:N"
   * @return the same value on {@code device} ("cpu", "vulkan", "vulkan:N"), as a new tensor
   */
  public Tensor copyTo(CairnContext ctx, String device) {
    java.util.Objects.requireNonNull(device, "device");
    long h = handle();
    long c = ctx.handle();
    try {
      return new Tensor(CairnNative.tensorCopyToDevice(c, h, NativeResources.cstr(device)));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(ctx);
    }
  }

  @Override
  public String toString() {
    if (isClosed()) return "Tensor(closed)";
    return "Tensor(" + dtype().cName() + Arrays.toString(shapeRef()).replace(" ", "") + ", " + device() + ")";
  }

  /** The Java array types tensors convert to and from, and the dtypes each can hold. */
  private enum ArrayKind {
    FLOAT(DType.FLOAT32, DType.COMPLEX64),
    DOUBLE(DType.FLOAT64),
    INT(DType.INT32),
    LONG(DType.INT64),
    SHORT(DType.INT16, DType.FLOAT16, DType.BFLOAT16),
    BYTE(DType.INT8, DType.UINT8),
    BOOLEAN(DType.BOOL);

    private final DType[] dtypes;

    ArrayKind(DType... dtypes) {
      this.dtypes = dtypes;
    }

    static ArrayKind of(Object array) {
      if (array instanceof float[]) return FLOAT;
      if (array instanceof double[]) return DOUBLE;
      if (array instanceof int[]) return INT;
      if (array instanceof long[]) return LONG;
      if (array instanceof short[]) return SHORT;
      if (array instanceof byte[]) return BYTE;
      if (array instanceof boolean[]) return BOOLEAN;
      throw new IllegalArgumentException(
          "tensor data must be a primitive array or a ByteBuffer, not " + array.getClass().getName());
    }

    void check(DType dtype, String what) {
      for (DType d : dtypes) if (d == dtype) return;
      throw new IllegalArgumentException(
          what + ": a " + name().toLowerCase() + "[] cannot hold " + dtype.cName() + " elements (it holds "
              + Arrays.toString(dtypes).toLowerCase() + ")");
    }
  }
}
