package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * <b>Experimental</b> (control flow, C <code>CAIRN_EXPERIMENTAL</code>): may change in a minor release.
 *
 * tf.TensorArray with a fixed size: {@code size} elements of one dtype and shape, held as one
 * ordinary {@link Tensor} of shape [size, element...], so it can be a {@link ControlFlow#whileLoop}
 * variable and needs no stacking (the array is the stacked tensor).
 *
 * <pre>{@code
 * try (Tensor empty = TensorArray.create(ctx, DType.FLOAT32, 5, 3);     // 5 elements of [3]
 *     Tensor filled = TensorArray.write(ctx, empty, 2, row);           // element 2 = row
 *     Tensor back = TensorArray.read(ctx, filled, 2)) { ... }
 * }</pre>
 *
 * <p>Writes return a new array; the old one is unchanged. Elements never written read as zeros.
 * An index is an INT32 or INT64 scalar tensor (the {@code long} overloads make one). Eagerly an
 * index outside [0, size) throws {@link CairnException} OUT_OF_RANGE; inside a compiled function
 * the index has no value yet, and an out-of-range write leaves the array unchanged (keep indices
 * in range with the loop condition).
 */
public final class TensorArray {
  private TensorArray() {}

  /**
   * A new array of {@code size} zero elements of {@code elementShape} (none: scalars).
   *
   * @param ctx the context
   * @param dtype the element type
   * @param size the number of elements
   * @param elementShape the shape of one element
   * @return a new array of {@code size} zero elements of {@code elementShape} (none: scalars)
   */
  public static Tensor create(CairnContext ctx, DType dtype, long size, long... elementShape) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(elementShape, "elementShape");
    try {
      return new Tensor(CairnNative.tensorArrayCreate(ctx.handle(), dtype.value(), size, elementShape));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * {@code array} with element {@code index} (an INT32 or INT64 scalar) set to {@code value}.
   *
   * @param ctx the context
   * @param array the tensor array (a tensor of shape [size, element...])
   * @param index the zero-based index
   * @param value the value to set
   * @return a new tensor, which the caller closes
   */
  public static Tensor write(CairnContext ctx, Tensor array, Tensor index, Tensor value) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(array, "array");
    Objects.requireNonNull(index, "index");
    Objects.requireNonNull(value, "value");
    try {
      return new Tensor(CairnNative.tensorArrayWrite(ctx.handle(), array.handle(), index.handle(), value.handle()));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(array);
      Reference.reachabilityFence(index);
      Reference.reachabilityFence(value);
    }
  }

  /**
   * {@code array} with element {@code index} set to {@code value}.
   *
   * @param ctx the context
   * @param array the tensor array (a tensor of shape [size, element...])
   * @param index the zero-based index
   * @param value the value to set
   * @return a new tensor, which the caller closes
   */
  public static Tensor write(CairnContext ctx, Tensor array, long index, Tensor value) {
    try (Tensor i = Tensor.scalar(ctx, index)) {
      return write(ctx, array, i, value);
    }
  }

  /**
   * Element {@code index} (an INT32 or INT64 scalar) of {@code array}.
   *
   * @param ctx the context
   * @param array the tensor array (a tensor of shape [size, element...])
   * @param index the zero-based index
   * @return a new tensor, which the caller closes
   */
  public static Tensor read(CairnContext ctx, Tensor array, Tensor index) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(array, "array");
    Objects.requireNonNull(index, "index");
    try {
      return new Tensor(CairnNative.tensorArrayRead(ctx.handle(), array.handle(), index.handle()));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(array);
      Reference.reachabilityFence(index);
    }
  }

  /**
   * Element {@code index} of {@code array}.
   *
   * @param ctx the context
   * @param array the tensor array (a tensor of shape [size, element...])
   * @param index the zero-based index
   * @return a new tensor, which the caller closes
   */
  public static Tensor read(CairnContext ctx, Tensor array, long index) {
    try (Tensor i = Tensor.scalar(ctx, index)) {
      return read(ctx, array, i);
    }
  }
}
