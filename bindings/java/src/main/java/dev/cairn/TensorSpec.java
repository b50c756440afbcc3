package dev.cairn;

import java.util.Arrays;
import java.util.Objects;

/**
 * One input of a compiled function's input signature (cairn_tensor_spec): a dtype and a shape
 * whose dimensions may be {@link #ANY} (-1), like tf.TensorSpec. Immutable.
 */
public final class TensorSpec {
  /** A dimension of any size. */
  public static final long ANY = -1;

  private final DType dtype;
  private final long[] shape;

  private TensorSpec(DType dtype, long[] shape) {
    this.dtype = dtype;
    this.shape = shape;
  }

  /**
   * A spec of {@code dtype} and {@code shape} (no dimensions: a scalar; -1: any size).
   *
   * @param dtype the element type
   * @param shape the dimensions (none for a scalar)
   * @return a spec of {@code dtype} and {@code shape} (no dimensions: a scalar; -1: any size)
   */
  public static TensorSpec of(DType dtype, long... shape) {
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(shape, "shape");
    for (long d : shape) {
      if (d < ANY) throw new IllegalArgumentException("dimension " + d + " in " + Arrays.toString(shape) + " (expected >= 0, or -1 for any)");
    }
    return new TensorSpec(dtype, shape.clone());
  }

  /**
   * The element type.
   *
   * @return the dtype
   */
  public DType dtype() {
    return dtype;
  }

  /**
   * The dimensions, -1 ({@link #ANY}) where any length matches.
   *
   * @return a copy of the dimensions
   */
  public long[] shape() {
    return shape.clone();
  }

  @Override
  public String toString() {
    return dtype.cName() + Arrays.toString(shape).replace(" ", "");
  }
}
