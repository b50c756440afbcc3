package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A variable (tf.Variable): a named, mutable slot holding a tensor whose dtype, shape and device
 * are fixed at creation. Reads return snapshots that later assignments do not change; updates are
 * atomic with respect to other writers.
 */
public final class Variable extends CairnObject {
  Variable(long handle) {
    super(handle);
  }

  /**
   * A variable named "Variable", trainable, without scope, holding {@code initial}.
   *
   * @param ctx the context
   * @param initial the initial value
   * @return a variable named "Variable", trainable, without scope, holding {@code initial}
   */
  public static Variable create(CairnContext ctx, Tensor initial) {
    return create(ctx, initial, null);
  }

  /**
   * A variable holding {@code initial} (shared, not copied: tensors are immutable), with these
   * options (null: the defaults). Throws INVALID_ARGUMENT for a STRING tensor or a bad name.
   *
   * @param ctx the context
   * @param initial the initial value
   * @param options the options (null: every default)
   * @return the new variable, which the caller closes
   */
  public static Variable create(CairnContext ctx, Tensor initial, Options options) {
    Objects.requireNonNull(initial, "initial");
    if (options == null) options = new Options();
    Module scope = options.scope;
    byte[] name = NativeResources.cstr(options.name);
    long c = ctx.handle();
    long t = initial.handle();
    long s = scope == null ? 0 : scope.handle();
    try {
      return new Variable(CairnNative.variableCreate(c, t, options.set, name, options.trainable ? 1 : 0, s));
    } finally {
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(initial);
      Reference.reachabilityFence(scope);
    }
  }

  /**
   * Options for a new variable; each starts at the C API's default.
   *
   * @return new options, each at its default
   */
  public static Options options() {
    return new Options();
  }

  /** The options of cairn_variable_create. Not thread-safe to mutate. */
  public static final class Options {
    private long set; // CairnNative.VARIABLE_OPTIONS_* of the fields set
    private String name;
    private boolean trainable;
    private Module scope;

    /** Options at their defaults (the same as {@code options()}). */
    public Options() {}

    /**
     * The name; null (default) means "Variable". Non-empty, no ':'.
     *
     * @param name the name
     * @return these options
     */
    public Options name(String name) {
      this.name = name;
      set |= CairnNative.VARIABLE_OPTIONS_NAME;
      return this;
    }

    /**
     * Whether trainable-only queries include it; default true.
     *
     * @param trainable whether the variable is trainable
     * @return these options
     */
    public Options trainable(boolean trainable) {
      this.trainable = trainable;
      set |= CairnNative.VARIABLE_OPTIONS_TRAINABLE;
      return this;
    }

    /**
     * A module naming the variable "&lt;scope&gt;/&lt;name&gt;:0"; null (default) for none. Not kept.
     *
     * @param scope the module whose name prefixes the variable's name (null: none)
     * @return these options
     */
    public Options scope(Module scope) {
      this.scope = scope;
      set |= CairnNative.VARIABLE_OPTIONS_SCOPE;
      return this;
    }
  }

  /**
   * A snapshot of the value, as a new tensor the caller closes.
   *
   * @return a snapshot of the value, as a new tensor the caller closes
   */
  public Tensor read() {
    long h = handle();
    try {
      return new Tensor(CairnNative.variableRead(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Replaces the value with {@code value}, which must have the variable's dtype and shape
   * (INVALID_ARGUMENT otherwise; the value is then unchanged).
   *
   * @param value the value to set
   */
  public void assign(Tensor value) {
    Objects.requireNonNull(value, "value");
    long h = handle();
    long t = value.handle();
    checkFits("Variable.assign", value);
    try {
      CairnNative.variableAssign(h, t);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(value);
    }
  }

  // INVALID_ARGUMENT naming `method` when `value`'s dtype or shape differs from the variable's
  // (fixed at creation): the binding's own words for what it can see before calling C.
  private void checkFits(String method, Tensor value) {
    DType d = dtype();
    long[] s = shape();
    if (value.dtype() != d || !java.util.Arrays.equals(value.shape(), s)) {
      throw new CairnException(Code.INVALID_ARGUMENT, method + ": a " + value.dtype().cName()
          + Tensor.shapeString(value.shape()) + " tensor for variable '" + name() + "' of " + d.cName()
          + Tensor.shapeString(s));
    }
  }

  /**
   * Adds {@code delta} (same dtype and shape, no broadcasting), atomically.
   *
   * @param delta the value to add or subtract
   */
  public void assignAdd(Tensor delta) {
    Objects.requireNonNull(delta, "delta");
    long h = handle();
    long t = delta.handle();
    checkFits("Variable.assignAdd", delta);
    try {
      CairnNative.variableAssignAdd(h, t);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(delta);
    }
  }

  /**
   * Subtracts {@code delta} (same dtype and shape, no broadcasting), atomically.
   *
   * @param delta the value to add or subtract
   */
  public void assignSub(Tensor delta) {
    Objects.requireNonNull(delta, "delta");
    long h = handle();
    long t = delta.handle();
    checkFits("Variable.assignSub", delta);
    try {
      CairnNative.variableAssignSub(h, t);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(delta);
    }
  }

  /**
   * The variable's name, e.g. "m1/m_v:0" or "Variable:0".
   *
   * @return the variable's name
   */
  public String name() {
    long h = handle();
    try {
      return CairnNative.variableName(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Whether trainable-only queries include it.
   *
   * @return whether trainable-only queries include it
   */
  public boolean trainable() {
    long h = handle();
    try {
      return CairnNative.variableTrainable(h) == 1;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The variable's dtype.
   *
   * @return the variable's dtype
   */
  public DType dtype() {
    long h = handle();
    int raw;
    try {
      raw = CairnNative.variableDtype(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    DType d = DType.fromValue(raw);
    if (d == null) throw new IllegalStateException("the variable has a dtype this binding does not know: " + raw);
    return d;
  }

  /**
   * The variable's shape (through a read, which does not copy the data).
   *
   * @return the variable's shape (through a read, which does not copy the data)
   */
  public long[] shape() {
    try (Tensor t = read()) {
      return t.shape();
    }
  }

  @Override
  String describe() {
    return name() + ", " + dtype().cName();
  }
}
