package dev.cairn;

import java.lang.ref.Reference;

/**
 * A learning-rate schedule (tf.keras.optimizers.schedules): a function of the optimizer's step,
 * given to {@link Optimizer.Options#schedule}. A tracked object (its kind is TRACKABLE) whose
 * parameters are saved with the optimizer that uses it.
 */
public final class LearningRateSchedule extends CairnObject {
  // Every parameter is given here, so every field of the C options is set.
  private static final long EXPONENTIAL_DECAY_ALL = CairnNative.EXPONENTIAL_DECAY_OPTIONS_INITIAL_LEARNING_RATE
      | CairnNative.EXPONENTIAL_DECAY_OPTIONS_DECAY_STEPS | CairnNative.EXPONENTIAL_DECAY_OPTIONS_DECAY_RATE
      | CairnNative.EXPONENTIAL_DECAY_OPTIONS_STAIRCASE;
  private static final long COSINE_DECAY_ALL = CairnNative.COSINE_DECAY_OPTIONS_INITIAL_LEARNING_RATE
      | CairnNative.COSINE_DECAY_OPTIONS_DECAY_STEPS | CairnNative.COSINE_DECAY_OPTIONS_ALPHA;

  private LearningRateSchedule(long handle) {
    super(handle);
  }

  /**
   * {@code initialLearningRate * decayRate ^ (step / decaySteps)}, with a floored exponent when
   * {@code staircase}. INVALID_ARGUMENT for decaySteps &lt;= 0 or a bad rate.
   *
   * @param ctx the context
   * @param initialLearningRate the learning rate at step 0
   * @param decaySteps the number of steps over which to decay
   * @param decayRate the factor applied every decaySteps steps
   * @param staircase whether to decay in whole steps
   * @return the new learning rate schedule, which the caller closes
   */
  public static LearningRateSchedule exponentialDecay(
      CairnContext ctx, double initialLearningRate, long decaySteps, double decayRate, boolean staircase) {
    long c = ctx.handle();
    try {
      return new LearningRateSchedule(
          CairnNative.scheduleExponentialDecay(c, EXPONENTIAL_DECAY_ALL, initialLearningRate, decaySteps, decayRate, staircase ? 1 : 0));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * {@code initialLearningRate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decaySteps) /
   * decaySteps)) + alpha)}. INVALID_ARGUMENT for decaySteps &lt;= 0.
   *
   * @param ctx the context
   * @param initialLearningRate the learning rate at step 0
   * @param decaySteps the number of steps over which to decay
   * @param alpha the final learning rate as a fraction of the initial one
   * @return the new learning rate schedule, which the caller closes
   */
  public static LearningRateSchedule cosineDecay(
      CairnContext ctx, double initialLearningRate, long decaySteps, double alpha) {
    long c = ctx.handle();
    try {
      return new LearningRateSchedule(CairnNative.scheduleCosineDecay(c, COSINE_DECAY_ALL, initialLearningRate, decaySteps, alpha));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }
}
