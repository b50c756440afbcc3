package dev.cairn;

import java.lang.ref.Reference;
import java.util.List;
import java.util.Objects;

/**
 * A layer (tf.keras.layers.Layer): a tracked object (kind LAYER) that maps a tensor to a tensor and
 * owns its variables, created on the first call from the input's shape. Make one with {@link
 * Layers}, or compose them in a {@link Sequential}. Put a layer in a {@link Checkpoint} to save its
 * weights; a checkpoint restored before the first call is applied when the variables appear.
 *
 * <p>A layer handed out by the object graph ({@link CairnObject#get}) is a {@code Layer}, also when
 * the object is a Sequential model.
 */
public class Layer extends CairnObject {
  Layer(long handle) {
    super(handle);
  }

  /**
   * Calls the layer in inference mode; see {@link #call(Tensor, boolean)}.
   *
   * @param x the input tensor
   * @return a new tensor, which the caller closes
   */
  public Tensor call(Tensor x) {
    return call(x, false);
  }

  /**
   * Calls the layer (building it on the first call), as a new tensor the caller closes. {@code
   * training} switches Dropout and BatchNormalization to training behaviour. Throws
   * INVALID_ARGUMENT naming the layer for an input of the wrong rank, dtype or size.
   *
   * @param x the input tensor
   * @param training whether the call is for training (dropout and batch normalization behave differently)
   * @return a new tensor, which the caller closes
   */
  public Tensor call(Tensor x, boolean training) {
    Objects.requireNonNull(x, "x");
    long h = handle();
    long t = x.handle();
    try {
      return new Tensor(CairnNative.layerCall(h, t, training ? 1 : 0));
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(x);
    }
  }

  /**
   * The layer's variables, nested layers' included, in creation order (only trainable ones when
   * {@code trainableOnly}); empty before the first call. The caller closes them.
   *
   * @param trainableOnly whether to list trainable variables only
   * @return the variables, each a new handle the caller closes
   */
  public List<Variable> weights(boolean trainableOnly) {
    long h = handle();
    long array;
    try {
      array = CairnNative.layerWeights(h, trainableOnly ? 1 : 0);
    } finally {
      Reference.reachabilityFence(this);
    }
    return objects(array, Variable.class);
  }

  /**
   * {@code weights(false)}: every variable, trainable or not.
   *
   * @return every variable, each a new handle the caller closes
   */
  public List<Variable> weights() {
    return weights(false);
  }

  /**
   * {@code weights(true)}: what an optimizer updates.
   *
   * @return the trainable variables, each a new handle the caller closes
   */
  public List<Variable> trainableWeights() {
    return weights(true);
  }

  /**
   * Keras' summary(): layers, output shapes, parameter counts and totals, as a table.
   *
   * @return the summary table
   */
  public String summary() {
    long h = handle();
    try {
      return CairnNative.layerSummary(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The number of scalars in the layer's variables (0 before the first call).
   *
   * @return the number of scalars in the layer's variables (0 before the first call)
   */
  public long countParams() {
    long h = handle();
    try {
      return CairnNative.layerCountParams(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
