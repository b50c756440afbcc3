package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * Factories of the built-in layers (tf.keras.layers). Each returns a new {@link Layer} the caller
 * closes. Activations are named: "linear" (or null), "relu", "relu6", "sigmoid", "tanh", "softmax",
 * "softplus", "elu", "selu", "gelu". Initializers: "glorot_uniform", "glorot_normal", "he_normal",
 * "he_uniform", "zeros", "ones", "random_normal", "random_uniform". A null name gives a unique
 * default ("dense", "dense_1", ...). Bad options throw {@link CairnException} with code
 * INVALID_ARGUMENT naming the option.
 */
public final class Layers {
  private Layers() {}

  // ---- Dense ----

  /**
   * Dense with {@code units} outputs, linear, with bias, default initializers.
   *
   * @param ctx the context
   * @param units the number of output units
   * @return the new layer, which the caller closes
   */
  public static Layer dense(CairnContext ctx, long units) {
    return dense(ctx, denseOptions(units));
  }

  /**
   * Dense: activation(x @ kernel + bias) over the last axis; weights "kernel" and "bias".
   *
   * @param ctx the context
   * @param o the options
   * @return the new layer, which the caller closes
   */
  public static Layer dense(CairnContext ctx, DenseOptions o) {
    Objects.requireNonNull(o, "options");
    long c = ctx.handle();
    try {
      return new Layer(CairnNative.denseCreate(c, o.set, o.units, NativeResources.cstr(o.activation), o.useBias ? 1 : 0,
          NativeResources.cstr(o.kernelInitializer), NativeResources.cstr(o.biasInitializer),
          NativeResources.cstr(o.name)));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Dense options for {@code units} outputs; the rest at their defaults.
   *
   * @param units the number of output units
   * @return new options, each at its default
   */
  public static DenseOptions denseOptions(long units) {
    return new DenseOptions(units);
  }

  /** The options of cairn_dense_create. Not thread-safe to mutate. */
  public static final class DenseOptions {
    private long set; // CairnNative.DENSE_OPTIONS_* of the fields set
    private final long units;
    private String activation;
    private boolean useBias;
    private String kernelInitializer;
    private String biasInitializer;
    private String name;

    DenseOptions(long units) {
      this.units = units;
      set |= CairnNative.DENSE_OPTIONS_UNITS;
    }

    /**
     * Default null (linear).
     *
     * @param activation the activation's name, e.g. "relu" (null: linear)
     * @return these options
     */
    public DenseOptions activation(String activation) {
      this.activation = activation;
      set |= CairnNative.DENSE_OPTIONS_ACTIVATION;
      return this;
    }

    /**
     * Default true.
     *
     * @param useBias whether the layer adds a bias
     * @return these options
     */
    public DenseOptions useBias(boolean useBias) {
      this.useBias = useBias;
      set |= CairnNative.DENSE_OPTIONS_USE_BIAS;
      return this;
    }

    /**
     * Default null (glorot_uniform).
     *
     * @param initializer the initializer's name, e.g. "glorot_uniform" or "zeros"
     * @return these options
     */
    public DenseOptions kernelInitializer(String initializer) {
      this.kernelInitializer = initializer;
      set |= CairnNative.DENSE_OPTIONS_KERNEL_INITIALIZER;
      return this;
    }

    /**
     * Default null (zeros).
     *
     * @param initializer the initializer's name, e.g. "glorot_uniform" or "zeros"
     * @return these options
     */
    public DenseOptions biasInitializer(String initializer) {
      this.biasInitializer = initializer;
      set |= CairnNative.DENSE_OPTIONS_BIAS_INITIALIZER;
      return this;
    }

    /**
     * Default null (a unique "dense..." name).
     *
     * @param name the name
     * @return these options
     */
    public DenseOptions name(String name) {
      this.name = name;
      set |= CairnNative.DENSE_OPTIONS_NAME;
      return this;
    }
  }

  // ---- Conv2D ----

  /**
   * Conv2D with {@code filters} 3x3 filters, stride 1, VALID padding.
   *
   * @param ctx the context
   * @param filters the number of output channels
   * @return the new layer, which the caller closes
   */
  public static Layer conv2d(CairnContext ctx, long filters) {
    return conv2d(ctx, conv2dOptions(filters));
  }

  /**
   * Conv2D over NHWC input; weights "kernel" [kh, kw, in, filters] and "bias".
   *
   * @param ctx the context
   * @param o the options
   * @return the new layer, which the caller closes
   */
  public static Layer conv2d(CairnContext ctx, Conv2DOptions o) {
    Objects.requireNonNull(o, "options");
    long c = ctx.handle();
    try {
      return new Layer(CairnNative.conv2dCreate(c, o.set, o.filters, o.kernelH, o.kernelW, o.strideH, o.strideW,
          NativeResources.cstr(o.padding), NativeResources.cstr(o.activation), o.useBias ? 1 : 0,
          NativeResources.cstr(o.kernelInitializer), NativeResources.cstr(o.biasInitializer),
          NativeResources.cstr(o.name)));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Conv2D options for {@code filters} filters; the rest at their defaults.
   *
   * @param filters the number of output channels
   * @return new options, each at its default
   */
  public static Conv2DOptions conv2dOptions(long filters) {
    return new Conv2DOptions(filters);
  }

  /** The options of cairn_conv2d_create. Not thread-safe to mutate. */
  public static final class Conv2DOptions {
    private long set; // CairnNative.CONV2D_OPTIONS_* of the fields set
    private final long filters;
    private long kernelH;
    private long kernelW;
    private long strideH;
    private long strideW;
    private String padding;
    private String activation;
    private boolean useBias;
    private String kernelInitializer;
    private String biasInitializer;
    private String name;

    Conv2DOptions(long filters) {
      this.filters = filters;
      set |= CairnNative.CONV2D_OPTIONS_FILTERS;
    }

    /**
     * Default 3 x 3.
     *
     * @param height the window height
     * @param width the window width
     * @return these options
     */
    public Conv2DOptions kernelSize(long height, long width) {
      this.kernelH = height;
      set |= CairnNative.CONV2D_OPTIONS_KERNEL_H;
      this.kernelW = width;
      set |= CairnNative.CONV2D_OPTIONS_KERNEL_W;
      return this;
    }

    /**
     * Default 1 x 1.
     *
     * @param height the window height
     * @param width the window width
     * @return these options
     */
    public Conv2DOptions strides(long height, long width) {
      this.strideH = height;
      set |= CairnNative.CONV2D_OPTIONS_STRIDE_H;
      this.strideW = width;
      set |= CairnNative.CONV2D_OPTIONS_STRIDE_W;
      return this;
    }

    /**
     * "VALID" (default, null) or "SAME".
     *
     * @param padding "valid" or "same"
     * @return these options
     */
    public Conv2DOptions padding(String padding) {
      this.padding = padding;
      set |= CairnNative.CONV2D_OPTIONS_PADDING;
      return this;
    }

    /**
     * Default null (linear).
     *
     * @param activation the activation's name, e.g. "relu" (null: linear)
     * @return these options
     */
    public Conv2DOptions activation(String activation) {
      this.activation = activation;
      set |= CairnNative.CONV2D_OPTIONS_ACTIVATION;
      return this;
    }

    /**
     * Default true.
     *
     * @param useBias whether the layer adds a bias
     * @return these options
     */
    public Conv2DOptions useBias(boolean useBias) {
      this.useBias = useBias;
      set |= CairnNative.CONV2D_OPTIONS_USE_BIAS;
      return this;
    }

    /**
     * Default null (glorot_uniform).
     *
     * @param initializer the initializer's name, e.g. "glorot_uniform" or "zeros"
     * @return these options
     */
    public Conv2DOptions kernelInitializer(String initializer) {
      this.kernelInitializer = initializer;
      set |= CairnNative.CONV2D_OPTIONS_KERNEL_INITIALIZER;
      return this;
    }

    /**
     * Default null (zeros).
     *
     * @param initializer the initializer's name, e.g. "glorot_uniform" or "zeros"
     * @return these options
     */
    public Conv2DOptions biasInitializer(String initializer) {
      this.biasInitializer = initializer;
      set |= CairnNative.CONV2D_OPTIONS_BIAS_INITIALIZER;
      return this;
    }

    /**
     * Default null (a unique "conv2d..." name).
     *
     * @param name the name
     * @return these options
     */
    public Conv2DOptions name(String name) {
      this.name = name;
      set |= CairnNative.CONV2D_OPTIONS_NAME;
      return this;
    }
  }

  // ---- Pooling ----

  /**
   * MaxPool2D with 2x2 windows and strides, VALID padding.
   *
   * @param ctx the context
   * @return the new layer, which the caller closes
   */
  public static Layer maxPool2d(CairnContext ctx) {
    return maxPool2d(ctx, pool2dOptions());
  }

  /**
   * MaxPool2D over NHWC input.
   *
   * @param ctx the context
   * @param o the options
   * @return the new layer, which the caller closes
   */
  public static Layer maxPool2d(CairnContext ctx, Pool2DOptions o) {
    return pool2d(ctx, o, true);
  }

  /**
   * AvgPool2D with 2x2 windows and strides, VALID padding.
   *
   * @param ctx the context
   * @return the new layer, which the caller closes
   */
  public static Layer avgPool2d(CairnContext ctx) {
    return avgPool2d(ctx, pool2dOptions());
  }

  /**
   * AvgPool2D over NHWC input.
   *
   * @param ctx the context
   * @param o the options
   * @return the new layer, which the caller closes
   */
  public static Layer avgPool2d(CairnContext ctx, Pool2DOptions o) {
    return pool2d(ctx, o, false);
  }

  private static Layer pool2d(CairnContext ctx, Pool2DOptions o, boolean max) {
    Objects.requireNonNull(o, "options");
    byte[] padding = NativeResources.cstr(o.padding);
    byte[] name = NativeResources.cstr(o.name);
    long c = ctx.handle();
    try {
      long h = max
          ? CairnNative.maxPool2dCreate(c, o.set, o.poolH, o.poolW, o.strideH, o.strideW, padding, name)
          : CairnNative.avgPool2dCreate(c, o.set, o.poolH, o.poolW, o.strideH, o.strideW, padding, name);
      return new Layer(h);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Pooling options at their defaults.
   *
   * @return new options, each at its default
   */
  public static Pool2DOptions pool2dOptions() {
    return new Pool2DOptions();
  }

  /** The options of cairn_max_pool2d_create and cairn_avg_pool2d_create. Not thread-safe to mutate. */
  public static final class Pool2DOptions {
    private long set; // CairnNative.POOL2D_OPTIONS_* of the fields set
    private long poolH;
    private long poolW;
    private long strideH;
    private long strideW;
    private String padding;
    private String name;

    Pool2DOptions() {}

    /**
     * Default 2 x 2.
     *
     * @param height the window height
     * @param width the window width
     * @return these options
     */
    public Pool2DOptions poolSize(long height, long width) {
      this.poolH = height;
      set |= CairnNative.POOL2D_OPTIONS_POOL_H;
      this.poolW = width;
      set |= CairnNative.POOL2D_OPTIONS_POOL_W;
      return this;
    }

    /**
     * Default 0 x 0: the pool size.
     *
     * @param height the window height
     * @param width the window width
     * @return these options
     */
    public Pool2DOptions strides(long height, long width) {
      this.strideH = height;
      set |= CairnNative.POOL2D_OPTIONS_STRIDE_H;
      this.strideW = width;
      set |= CairnNative.POOL2D_OPTIONS_STRIDE_W;
      return this;
    }

    /**
     * "VALID" (default, null) or "SAME".
     *
     * @param padding "valid" or "same"
     * @return these options
     */
    public Pool2DOptions padding(String padding) {
      this.padding = padding;
      set |= CairnNative.POOL2D_OPTIONS_PADDING;
      return this;
    }

    /**
     * Default null (a unique default name).
     *
     * @param name the name
     * @return these options
     */
    public Pool2DOptions name(String name) {
      this.name = name;
      set |= CairnNative.POOL2D_OPTIONS_NAME;
      return this;
    }
  }

  // ---- Shape, lookup, activation ----

  // The mask bit of an optional field: set only when the caller gave a value (null: the C default).
  private static long ifSet(Object value, long bit) {
    return value == null ? 0 : bit;
  }

  /**
   * Flatten: [batch, ...] to [batch, product of the rest].
   *
   * @param ctx the context
   * @return the new layer, which the caller closes
   */
  public static Layer flatten(CairnContext ctx) {
    return flatten(ctx, null);
  }

  /**
   * Flatten named {@code name} (null: a unique default).
   *
   * @param ctx the context
   * @param name the name
   * @return the new layer, which the caller closes
   */
  public static Layer flatten(CairnContext ctx, String name) {
    byte[] n = NativeResources.cstr(name);
    long c = ctx.handle();
    try {
      return new Layer(CairnNative.flattenCreate(c, ifSet(name, CairnNative.FLATTEN_OPTIONS_NAME), n));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Embedding: int32/int64 indices in [0, inputDim) to vectors of outputDim; weight "embeddings".
   *
   * @param ctx the context
   * @param inputDim the number of distinct indices (the vocabulary size)
   * @param outputDim the size of each embedding vector
   * @return the new layer, which the caller closes
   */
  public static Layer embedding(CairnContext ctx, long inputDim, long outputDim) {
    return embedding(ctx, inputDim, outputDim, null);
  }

  /**
   * Embedding named {@code name} (null: a unique default).
   *
   * @param ctx the context
   * @param inputDim the number of distinct indices (the vocabulary size)
   * @param outputDim the size of each embedding vector
   * @param name the name
   * @return the new layer, which the caller closes
   */
  public static Layer embedding(CairnContext ctx, long inputDim, long outputDim, String name) {
    byte[] n = NativeResources.cstr(name);
    long c = ctx.handle();
    try {
      return new Layer(CairnNative.embeddingCreate(c,
          CairnNative.EMBEDDING_OPTIONS_INPUT_DIM | CairnNative.EMBEDDING_OPTIONS_OUTPUT_DIM
              | ifSet(name, CairnNative.EMBEDDING_OPTIONS_NAME),
          inputDim, outputDim, n));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * A layer applying {@code activation} (see the class comment for the names).
   *
   * @param ctx the context
   * @param activation the activation's name, e.g. "relu" (null: linear)
   * @return a layer applying {@code activation} (see the class comment for the names)
   */
  public static Layer activation(CairnContext ctx, String activation) {
    return activation(ctx, activation, null);
  }

  /**
   * An activation layer named {@code name} (null: a unique default).
   *
   * @param ctx the context
   * @param activation the activation's name, e.g. "relu" (null: linear)
   * @param name the name
   * @return an activation layer named {@code name} (null: a unique default)
   */
  public static Layer activation(CairnContext ctx, String activation, String name) {
    byte[] a = NativeResources.cstr(activation);
    byte[] n = NativeResources.cstr(name);
    long c = ctx.handle();
    try {
      return new Layer(CairnNative.activationCreate(c,
          ifSet(activation, CairnNative.ACTIVATION_OPTIONS_ACTIVATION) | ifSet(name, CairnNative.ACTIVATION_OPTIONS_NAME), a, n));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Dropout: with {@code training}, zeroes each element with probability {@code rate} in [0, 1)
   * and scales the rest by 1 / (1 - rate); the identity otherwise. Draws from the context's stream.
   *
   * @param ctx the context
   * @param rate the fraction of elements to drop, in [0, 1)
   * @return the new layer, which the caller closes
   */
  public static Layer dropout(CairnContext ctx, double rate) {
    return dropout(ctx, CairnNative.DROPOUT_OPTIONS_RATE, rate, 0, null);
  }

  /**
   * Dropout with its own {@code seed} (&lt; 0: the context's stream) and name (null: a default).
   *
   * @param ctx the context
   * @param rate the fraction of elements to drop, in [0, 1)
   * @param seed the random seed (-1: the context's stream)
   * @param name the name
   * @return the new layer, which the caller closes
   */
  public static Layer dropout(CairnContext ctx, double rate, long seed, String name) {
    return dropout(ctx, CairnNative.DROPOUT_OPTIONS_RATE | CairnNative.DROPOUT_OPTIONS_SEED
        | ifSet(name, CairnNative.DROPOUT_OPTIONS_NAME), rate, seed, name);
  }

  private static Layer dropout(CairnContext ctx, long set, double rate, long seed, String name) {
    byte[] n = NativeResources.cstr(name);
    long c = ctx.handle();
    try {
      return new Layer(CairnNative.dropoutCreate(c, set, rate, seed, n));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  // ---- Normalization ----

  /**
   * LayerNormalization over the last axis with the default options.
   *
   * @param ctx the context
   * @return the new layer, which the caller closes
   */
  public static Layer layerNorm(CairnContext ctx) {
    return layerNorm(ctx, normOptions());
  }

  /**
   * LayerNormalization; weights "gamma" and "beta".
   *
   * @param ctx the context
   * @param o the options
   * @return the new layer, which the caller closes
   */
  public static Layer layerNorm(CairnContext ctx, NormOptions o) {
    return norm(ctx, o, false);
  }

  /**
   * BatchNormalization over the last axis with the default options.
   *
   * @param ctx the context
   * @return the new layer, which the caller closes
   */
  public static Layer batchNorm(CairnContext ctx) {
    return batchNorm(ctx, normOptions());
  }

  /**
   * BatchNormalization: "gamma", "beta", and the non-trainable "moving_mean" and
   * "moving_variance", which calls with {@code training} update.
   *
   * @param ctx the context
   * @param o the options
   * @return the new layer, which the caller closes
   */
  public static Layer batchNorm(CairnContext ctx, NormOptions o) {
    return norm(ctx, o, true);
  }

  private static Layer norm(CairnContext ctx, NormOptions o, boolean batch) {
    Objects.requireNonNull(o, "options");
    byte[] name = NativeResources.cstr(o.name);
    int center = o.center ? 1 : 0;
    int scale = o.scale ? 1 : 0;
    long c = ctx.handle();
    try {
      long h = batch
          ? CairnNative.batchNormCreate(c, o.set, o.axis, o.epsilon, o.momentum, center, scale, name)
          : CairnNative.layerNormCreate(c, o.set, o.axis, o.epsilon, o.momentum, center, scale, name);
      return new Layer(h);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Normalization options at their defaults.
   *
   * @return new options, each at its default
   */
  public static NormOptions normOptions() {
    return new NormOptions();
  }

  /** The options of cairn_layer_norm_create and cairn_batch_norm_create. Not thread-safe to mutate. */
  public static final class NormOptions {
    private long set; // CairnNative.NORM_OPTIONS_* of the fields set
    private long axis;
    private double epsilon;
    private double momentum;
    private boolean center;
    private boolean scale;
    private String name;

    NormOptions() {}

    /**
     * The normalised axis; default -1.
     *
     * @param axis the axis to normalize over
     * @return these options
     */
    public NormOptions axis(long axis) {
      this.axis = axis;
      set |= CairnNative.NORM_OPTIONS_AXIS;
      return this;
    }

    /**
     * Default 1e-3.
     *
     * @param epsilon the small constant added for numerical stability
     * @return these options
     */
    public NormOptions epsilon(double epsilon) {
      this.epsilon = epsilon;
      set |= CairnNative.NORM_OPTIONS_EPSILON;
      return this;
    }

    /**
     * BatchNormalization's moving statistics; default 0.99.
     *
     * @param momentum the momentum
     * @return these options
     */
    public NormOptions momentum(double momentum) {
      this.momentum = momentum;
      set |= CairnNative.NORM_OPTIONS_MOMENTUM;
      return this;
    }

    /**
     * Learn "beta"; default true.
     *
     * @param center whether to add beta
     * @return these options
     */
    public NormOptions center(boolean center) {
      this.center = center;
      set |= CairnNative.NORM_OPTIONS_CENTER;
      return this;
    }

    /**
     * Learn "gamma"; default true.
     *
     * @param scale whether to multiply by gamma
     * @return these options
     */
    public NormOptions scale(boolean scale) {
      this.scale = scale;
      set |= CairnNative.NORM_OPTIONS_SCALE;
      return this;
    }

    /**
     * Default null (a unique default name).
     *
     * @param name the name
     * @return these options
     */
    public NormOptions name(String name) {
      this.name = name;
      set |= CairnNative.NORM_OPTIONS_NAME;
      return this;
    }
  }
}
