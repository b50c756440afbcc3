package dev.cairn;

import java.lang.ref.Reference;
import java.util.List;
import java.util.Objects;

/**
 * An optimizer (tf.keras.optimizers SGD, Adam, AdamW, RMSprop): a tracked object (kind OPTIMIZER)
 * holding its step counter, hyperparameters and slot variables, so that putting it in a {@link
 * Checkpoint} next to the model saves and restores its whole state. A slot is saved only when its
 * variable is saved too, under "&lt;variable path&gt;/.OPTIMIZER_SLOT/&lt;optimizer path&gt;/&lt;slot&gt;";
 * slots restored before they exist are applied when the next step creates them.
 */
public final class Optimizer extends CairnObject {
  Optimizer(long handle) {
    super(handle);
  }

  /**
   * Plain SGD at {@code learningRate}.
   *
   * @param ctx the context
   * @param learningRate the learning rate
   * @return the new optimizer, which the caller closes
   */
  public static Optimizer sgd(CairnContext ctx, double learningRate) {
    return create(ctx, options().kind(OptimizerKind.SGD).learningRate(learningRate));
  }

  /**
   * Adam at {@code learningRate} with the default betas and epsilon.
   *
   * @param ctx the context
   * @param learningRate the learning rate
   * @return the new optimizer, which the caller closes
   */
  public static Optimizer adam(CairnContext ctx, double learningRate) {
    return create(ctx, options().kind(OptimizerKind.ADAM).learningRate(learningRate));
  }

  /**
   * An optimizer with these options (null: SGD at 0.01). Throws INVALID_ARGUMENT naming a bad
   * option (a negative learning rate, a beta outside [0, 1), ...).
   *
   * @param ctx the context
   * @param options the options (null: every default)
   * @return the new optimizer, which the caller closes
   */
  public static Optimizer create(CairnContext ctx, Options options) {
    if (options == null) options = new Options();
    LearningRateSchedule schedule = options.schedule;
    long c = ctx.handle();
    long s = schedule == null ? 0 : schedule.handle();
    try {
      return new Optimizer(
          CairnNative.optimizerCreate(c, options.set, options.kind == null ? 0 : options.kind.value(), options.learningRate, s, options.momentum,
              options.nesterov ? 1 : 0, options.beta1, options.beta2, options.epsilon, options.weightDecay,
              options.rho, options.centered ? 1 : 0));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(schedule);
    }
  }

  /**
   * Options for a new optimizer; each starts at the C API's default.
   *
   * @return new options, each at its default
   */
  public static Options options() {
    return new Options();
  }

  /** The options of cairn_optimizer_create. Not thread-safe to mutate. */
  public static final class Options {
    private long set; // CairnNative.OPTIMIZER_OPTIONS_* of the fields set
    private OptimizerKind kind;
    private double learningRate;
    private LearningRateSchedule schedule;
    private double momentum;
    private boolean nesterov;
    private double beta1;
    private double beta2;
    private double epsilon;
    private double weightDecay;
    private double rho;
    private boolean centered;

    /** Options at their defaults (the same as {@code options()}). */
    public Options() {}

    /**
     * The algorithm; default SGD.
     *
     * @param kind the kind
     * @return these options
     */
    public Options kind(OptimizerKind kind) {
      this.kind = Objects.requireNonNull(kind, "kind");
      set |= CairnNative.OPTIMIZER_OPTIONS_KIND;
      return this;
    }

    /**
     * A constant learning rate; default 0.01; ignored when a schedule is set.
     *
     * @param learningRate the learning rate
     * @return these options
     */
    public Options learningRate(double learningRate) {
      this.learningRate = learningRate;
      set |= CairnNative.OPTIMIZER_OPTIONS_LEARNING_RATE;
      return this;
    }

    /**
     * A learning-rate schedule, which the optimizer keeps; null (default) for none.
     *
     * @param schedule the learning rate schedule (null: a constant learning rate)
     * @return these options
     */
    public Options schedule(LearningRateSchedule schedule) {
      this.schedule = schedule;
      set |= CairnNative.OPTIMIZER_OPTIONS_SCHEDULE;
      return this;
    }

    /**
     * SGD and RMSprop momentum; default 0.
     *
     * @param momentum the momentum
     * @return these options
     */
    public Options momentum(double momentum) {
      this.momentum = momentum;
      set |= CairnNative.OPTIMIZER_OPTIONS_MOMENTUM;
      return this;
    }

    /**
     * SGD: Nesterov momentum; default false.
     *
     * @param nesterov whether to use Nesterov momentum
     * @return these options
     */
    public Options nesterov(boolean nesterov) {
      this.nesterov = nesterov;
      set |= CairnNative.OPTIMIZER_OPTIONS_NESTEROV;
      return this;
    }

    /**
     * Adam and AdamW: default 0.9.
     *
     * @param beta1 the decay of the first-moment estimate
     * @return these options
     */
    public Options beta1(double beta1) {
      this.beta1 = beta1;
      set |= CairnNative.OPTIMIZER_OPTIONS_BETA_1;
      return this;
    }

    /**
     * Adam and AdamW: default 0.999.
     *
     * @param beta2 the decay of the second-moment estimate
     * @return these options
     */
    public Options beta2(double beta2) {
      this.beta2 = beta2;
      set |= CairnNative.OPTIMIZER_OPTIONS_BETA_2;
      return this;
    }

    /**
     * Adam, AdamW and RMSprop: default 1e-7.
     *
     * @param epsilon the small constant added for numerical stability
     * @return these options
     */
    public Options epsilon(double epsilon) {
      this.epsilon = epsilon;
      set |= CairnNative.OPTIMIZER_OPTIONS_EPSILON;
      return this;
    }

    /**
     * AdamW's decoupled weight decay: default 0.004.
     *
     * @param weightDecay the weight decay
     * @return these options
     */
    public Options weightDecay(double weightDecay) {
      this.weightDecay = weightDecay;
      set |= CairnNative.OPTIMIZER_OPTIONS_WEIGHT_DECAY;
      return this;
    }

    /**
     * RMSprop: default 0.9.
     *
     * @param rho the decay of the moving average of squared gradients
     * @return these options
     */
    public Options rho(double rho) {
      this.rho = rho;
      set |= CairnNative.OPTIMIZER_OPTIONS_RHO;
      return this;
    }

    /**
     * RMSprop: default false.
     *
     * @param centered whether to normalize by the centered second moment
     * @return these options
     */
    public Options centered(boolean centered) {
      this.centered = centered;
      set |= CairnNative.OPTIMIZER_OPTIONS_CENTERED;
      return this;
    }
  }

  /**
   * One update of each variable with its gradient (a null gradient skips its variable, as
   * TensorFlow skips None), then the step counter goes up by one. Throws INVALID_ARGUMENT naming
   * the variable for a dtype or shape mismatch, a variable that is not trainable or not floating,
   * or a variable given twice; nothing is updated then.
   *
   * @param gradients one gradient per variable (null skips that variable)
   * @param variables the variables, in the order of the gradients
   */
  public void applyGradients(Tensor[] gradients, Variable[] variables) {
    Objects.requireNonNull(gradients, "gradients");
    Objects.requireNonNull(variables, "variables");
    if (gradients.length != variables.length) {
      throw new IllegalArgumentException(
          gradients.length + " gradients for " + variables.length + " variables");
    }
    long[] g = new long[gradients.length];
    long[] v = new long[variables.length];
    for (int i = 0; i < g.length; ++i) {
      g[i] = gradients[i] == null ? 0 : gradients[i].handle();
      v[i] = Objects.requireNonNull(variables[i], "variables[" + i + "]").handle();
    }
    long h = handle();
    try {
      CairnNative.optimizerApplyGradients(h, g, v);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(gradients);
      Reference.reachabilityFence(variables);
    }
  }

  /**
   * {@link #applyGradients(Tensor[], Variable[])} with the variables of a list.
   *
   * @param gradients one gradient per variable (null skips that variable)
   * @param variables the variables, in the order of the gradients
   */
  public void applyGradients(Tensor[] gradients, List<? extends Variable> variables) {
    applyGradients(gradients, variables.toArray(new Variable[0]));
  }

  /**
   * The number of {@code applyGradients} calls so far (the checkpointed "iter").
   *
   * @return the number of {@code applyGradients} calls so far (the checkpointed "iter")
   */
  public long iterations() {
    long h = handle();
    try {
      return CairnNative.optimizerIterations(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The learning rate the next update uses (the schedule's value at the current step), a float32 value.
   *
   * @return the learning rate the next update uses (the schedule's value at the current step), a float32 value
   */
  public double learningRate() {
    long h = handle();
    try {
      return CairnNative.optimizerLearningRate(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Replaces a constant learning rate; FAILED_PRECONDITION when a schedule is in use.
   *
   * @param value the value to set
   */
  public void setLearningRate(double value) {
    long h = handle();
    try {
      CairnNative.optimizerSetLearningRate(h, value);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The slot {@code name} ("m", "v", "momentum", "rms", "mg") held for {@code variable}, as a new
   * handle the caller closes. NOT_FOUND before the variable's first update.
   *
   * @param variable the variable
   * @param name the name
   * @return the slot variable, a new handle the caller closes
   */
  public Variable slot(Variable variable, String name) {
    Objects.requireNonNull(variable, "variable");
    byte[] n = NativeResources.cstr(Objects.requireNonNull(name, "name"));
    long h = handle();
    long v = variable.handle();
    long slot;
    try {
      slot = CairnNative.optimizerGetSlot(h, v, n);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(variable);
    }
    return wrap(slot, Variable.class, "slot \"" + name + "\"");
  }

  @Override
  String describe() {
    return "iterations=" + iterations();
  }
}
