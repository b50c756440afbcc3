package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A streaming metric (tf.keras.metrics Mean, Accuracy): a tracked object (its kind is TRACKABLE)
 * holding float64 "total" and "count" variables, so a checkpoint can save it.
 */
public final class Metric extends CairnObject {
  private final MetricKind metricKind;

  private Metric(long handle, MetricKind kind) {
    super(handle);
    this.metricKind = kind;
  }

  /**
   * A Mean metric named "mean".
   *
   * @param ctx the context
   * @return a Mean metric named "mean"
   */
  public static Metric mean(CairnContext ctx) {
    return create(ctx, MetricKind.MEAN, null);
  }

  /**
   * A Mean metric named {@code name}.
   *
   * @param ctx the context
   * @param name the name
   * @return a Mean metric named {@code name}
   */
  public static Metric mean(CairnContext ctx, String name) {
    return create(ctx, MetricKind.MEAN, name);
  }

  /**
   * An Accuracy metric named "accuracy".
   *
   * @param ctx the context
   * @return an Accuracy metric named "accuracy"
   */
  public static Metric accuracy(CairnContext ctx) {
    return create(ctx, MetricKind.ACCURACY, null);
  }

  /**
   * An Accuracy metric named {@code name}.
   *
   * @param ctx the context
   * @param name the name
   * @return an Accuracy metric named {@code name}
   */
  public static Metric accuracy(CairnContext ctx, String name) {
    return create(ctx, MetricKind.ACCURACY, name);
  }

  /**
   * A metric of {@code kind} named {@code name} (null: "mean" / "accuracy").
   *
   * @param ctx the context
   * @param kind the kind
   * @param name the name
   * @return a metric of {@code kind} named {@code name} (null: "mean" / "accuracy")
   */
  public static Metric create(CairnContext ctx, MetricKind kind, String name) {
    Objects.requireNonNull(kind, "kind");
    byte[] n = NativeResources.cstr(name);
    long c = ctx.handle();
    try {
      return new Metric(CairnNative.metricCreate(c, kind.value(), n), kind);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * MEAN or ACCURACY.
   *
   * @return the metric's kind
   */
  public MetricKind metricKind() {
    return metricKind;
  }

  /**
   * Mean: accumulates every value of {@code values}. An Accuracy metric throws INVALID_ARGUMENT.
   *
   * @param values the values to average
   */
  public void update(Tensor values) {
    update(values, null);
  }

  /**
   * Accuracy: accumulates predictions, integer labels {@code yTrue} against the argmax of scores
   * {@code yPred} (or equality when both have one shape). A Mean metric takes one tensor:
   * INVALID_ARGUMENT for a non-null {@code yPred} (and for a null one on an Accuracy metric).
   *
   * @param yTrue the true values (labels)
   * @param yPred the predictions
   */
  public void update(Tensor yTrue, Tensor yPred) {
    Objects.requireNonNull(yTrue, "yTrue");
    long h = handle();
    long a = yTrue.handle();
    long b = yPred == null ? 0 : yPred.handle();
    MetricKind kind = metricKind();
    if (kind == MetricKind.MEAN && yPred != null) {
      throw new CairnException(Code.INVALID_ARGUMENT, "Metric.update: a mean metric takes one tensor (update(values))");
    }
    if (kind == MetricKind.ACCURACY && yPred == null) {
      throw new CairnException(Code.INVALID_ARGUMENT, "Metric.update: an accuracy metric takes yTrue and yPred");
    }
    try {
      CairnNative.metricUpdate(h, a, b);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(yTrue);
      Reference.reachabilityFence(yPred);
    }
  }

  /**
   * The current value (0 when nothing was accumulated).
   *
   * @return the current value (0 when nothing was accumulated)
   */
  public double result() {
    long h = handle();
    try {
      return CairnNative.metricResult(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Sets total and count to zero. */
  public void reset() {
    long h = handle();
    try {
      CairnNative.metricReset(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  String describe() {
    return metricKind.name().toLowerCase(java.util.Locale.ROOT) + " " + result();
  }
}
