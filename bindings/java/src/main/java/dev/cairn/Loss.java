package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * Loss functions (tf.keras.losses): the mean loss over every element as a scalar of y_pred's
 * dtype, built from registered ops so that a {@link GradientTape} differentiates it. Each returns a
 * new tensor the caller closes; mismatched shapes or dtypes throw INVALID_ARGUMENT.
 */
public final class Loss {
  private Loss() {}

  /**
   * The loss of {@code kind}; {@code fromLogits} applies to the cross-entropies.
   *
   * @param ctx the context
   * @param kind the kind
   * @param yTrue the true values (labels)
   * @param yPred the predictions
   * @param fromLogits whether the predictions are logits rather than probabilities
   * @return the loss of {@code kind}; {@code fromLogits} applies to the cross-entropies
   */
  public static Tensor compute(CairnContext ctx, LossKind kind, Tensor yTrue, Tensor yPred, boolean fromLogits) {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(yTrue, "yTrue");
    Objects.requireNonNull(yPred, "yPred");
    long c = ctx.handle();
    long t = yTrue.handle();
    long p = yPred.handle();
    try {
      return new Tensor(CairnNative.loss(c, kind.value(), t, p, fromLogits ? 1 : 0));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(yTrue);
      Reference.reachabilityFence(yPred);
    }
  }

  /**
   * mean((yTrue - yPred)^2).
   *
   * @param ctx the context
   * @param yTrue the true values (labels)
   * @param yPred the predictions
   * @return a new tensor, which the caller closes
   */
  public static Tensor meanSquaredError(CairnContext ctx, Tensor yTrue, Tensor yPred) {
    return compute(ctx, LossKind.MEAN_SQUARED_ERROR, yTrue, yPred, false);
  }

  /**
   * mean(|yTrue - yPred|).
   *
   * @param ctx the context
   * @param yTrue the true values (labels)
   * @param yPred the predictions
   * @return a new tensor, which the caller closes
   */
  public static Tensor meanAbsoluteError(CairnContext ctx, Tensor yTrue, Tensor yPred) {
    return compute(ctx, LossKind.MEAN_ABSOLUTE_ERROR, yTrue, yPred, false);
  }

  /**
   * Binary cross-entropy of labels in {0, 1} against probabilities, or logits when {@code fromLogits}.
   *
   * @param ctx the context
   * @param yTrue the true values (labels)
   * @param yPred the predictions
   * @param fromLogits whether the predictions are logits rather than probabilities
   * @return a new tensor, which the caller closes
   */
  public static Tensor binaryCrossentropy(CairnContext ctx, Tensor yTrue, Tensor yPred, boolean fromLogits) {
    return compute(ctx, LossKind.BINARY_CROSSENTROPY, yTrue, yPred, fromLogits);
  }

  /**
   * Cross-entropy of integer class ids against scores [..., classes] (logits when {@code fromLogits}).
   *
   * @param ctx the context
   * @param yTrue the true values (labels)
   * @param yPred the predictions
   * @param fromLogits whether the predictions are logits rather than probabilities
   * @return a new tensor, which the caller closes
   */
  public static Tensor sparseCategoricalCrossentropy(
      CairnContext ctx, Tensor yTrue, Tensor yPred, boolean fromLogits) {
    return compute(ctx, LossKind.SPARSE_CATEGORICAL_CROSSENTROPY, yTrue, yPred, fromLogits);
  }
}
