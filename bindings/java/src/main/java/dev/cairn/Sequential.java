package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A Sequential model (tf.keras.Sequential): a layer that calls its layers in order. Its layers are
 * its tracked edges "layer-0", "layer-1", ..., so checkpoint keys read like
 * "model/layer-0/kernel/.ATTRIBUTES/VARIABLE_VALUE". A {@link Model} is a Sequential that can be
 * compiled and trained.
 */
public class Sequential extends Layer {
  Sequential(long handle) {
    super(handle);
  }

  /**
   * An empty model named {@code name} (null: a unique default such as "sequential").
   *
   * @param ctx the context
   * @param name the name
   * @return an empty model named {@code name} (null: a unique default such as "sequential")
   */
  public static Sequential create(CairnContext ctx, String name) {
    byte[] n = NativeResources.cstr(name);
    long c = ctx.handle();
    try {
      return new Sequential(CairnNative.sequentialCreate(c, name == null ? 0 : CairnNative.SEQUENTIAL_OPTIONS_NAME, n));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * A model named {@code name} holding {@code layers} in order (each keeps its own handle).
   *
   * @param ctx the context
   * @param name the name
   * @param layers the layers, in order
   * @return a model named {@code name} holding {@code layers} in order (each keeps its own handle)
   */
  public static Sequential of(CairnContext ctx, String name, Layer... layers) {
    Sequential model = create(ctx, name);
    try {
      for (Layer layer : layers) model.add(layer);
    } catch (RuntimeException | Error e) {
      model.close();
      throw e;
    }
    return model;
  }

  /**
   * Appends {@code layer}; the model keeps its own reference, so the caller still closes its handle.
   *
   * @param layer the layer to append
   * @return this model
   */
  public Sequential add(Layer layer) {
    Objects.requireNonNull(layer, "layer");
    long h = handle();
    long l = layer.handle();
    try {
      CairnNative.sequentialAdd(h, l);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(layer);
    }
    return this;
  }
}
