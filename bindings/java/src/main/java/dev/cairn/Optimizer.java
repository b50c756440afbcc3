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

  /** Plain SGD at {@code learningRate}. */
  public static Optimizer sgd(CairnContext ctx, double learningRate) {
    return create(ctx, options().kind(OptimizerKind.SGD).learningRate(learningRate));
  }

  /** Adam at {@code learningRate} with the default betas and epsilon. */
  public static Optimizer adam(CairnContext ctx, double learningRate) {
    return create(ctx, options().kind(OptimizerKind.ADAM).learningRate(learningRate));
  }

  /**
   * An optimizer with these options (null: SGD at 0.01). Throws INVALID_ARGUMENT naming a bad
   * option (a negative learning rate, a beta outside [0, 1), ...).
   */
  public static Optimizer create(CairnContext ctx, Options options) {
    if (options == null) options = new Options();
    LearningRateSchedule schedule = options.schedule;
    long c = ctx.handle();
    long s = schedule == null ? 0 : schedule.handle();
    try {
      return new Optimizer(
          CairnNative.optimizerCreate(c, options.kind.value(), options.learningRate, s, options.momentum,
              options.nesterov ? 1 : 0, options.beta1, options.beta2, options.epsilon, options.weightDecay,
              options.rho, options.centered ? 1 : 0));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(schedule);
    }
  }

  /** Options for a new optimizer; each starts at the C API's default. */
  public static Options options() {
    return new Options();
  }

  /** The options of cairn_optimizer_create. Not thread-safe to mutate. */
  public static final class Options {
    private OptimizerKind kind = OptimizerKind.SGD;
    private double learningRate = 0.01;
    private LearningRateSchedule schedule;
    private double momentum;
    private boolean nesterov;
    private double beta1 = 0.9;
    private double beta2 = 0.999;
    private double epsilon = 1e-7;
    private double weightDecay = 0.004;
    private double rho = 0.9;
    private boolean centered;

    public Options() {}

    /** The algorithm; default SGD. */
    public Options kind(OptimizerKind kind) {
      this.kind = Objects.requireNonNull(kind, "kind");
      return this;
    }

    /** A constant learning rate; default 0.01; ignored when a schedule is set. */
    public Options learningRate(double learningRate) {
      this.learningRate = learningRate;
      return this;
    }

    /** A learning-rate schedule, which the optimizer keeps; null (default) for none. */
    public Options schedule(LearningRateSchedule schedule) {
      this.schedule = schedule;
      return this;
    }

    /** SGD and RMSprop momentum; default 0. */
    public Options momentum(double momentum) {
      this.momentum = momentum;
      return this;
    }

    /** SGD: Nesterov momentum; default false. */
    public Options nesterov(boolean nesterov) {
      this.nesterov = nesterov;
      return this;
    }

    /** Adam and AdamW: default 0.9. */
    public Options beta1(double beta1) {
      this.beta1 = beta1;
      return this;
    }

    /** Adam and AdamW: default 0.999. */
    public Options beta2(double beta2) {
      this.beta2 = beta2;
      return this;
    }

    /** Adam, AdamW and RMSprop: default 1e-7. */
    public Options epsilon(double epsilon) {
      this.epsilon = epsilon;
      return this;
    }

    /** AdamW's decoupled weight decay: default 0.004. */
    public Options weightDecay(double weightDecay) {
      this.weightDecay = weightDecay;
      return this;
    }

    /** RMSprop: default 0.9. */
    public Options rho(double rho) {
      this.rho = rho;
      return this;
    }

    /** RMSprop: default false. */
    public Options centered(boolean centered) {
      this.centered = centered;
      return this;
    }
  }

  /**
   * One update of each variable with its gradient (a null gradient skips its variable, as
   * TensorFlow skips None), then the step counter goes up by one. Throws INVALID_ARGUMENT naming
   * the variable for a dtype or shape mismatch, a variable that is not trainable or not floating,
   * or a variable given twice; nothing is updated then.
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

  /** {@link #applyGradients(Tensor[], Variable[])} with the variables of a list. */
  public void applyGradients(Tensor[] gradients, List<? extends Variable> variables) {
    applyGradients(gradients, variables.toArray(new Variable[0]));
  }

  /** The number of {@code applyGradients} calls so far (the checkpointed "iter"). */
  public long iterations() {
    long h = handle();
    try {
      return CairnNative.optimizerIterations(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The learning rate the next update uses (the schedule's value at the current step), a float32 value. */
  public double learningRate() {
    long h = handle();
    try {
      return CairnNative.optimizerLearningRate(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Replaces a constant learning rate; FAILED_PRECONDITION when a schedule is in use. */
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
