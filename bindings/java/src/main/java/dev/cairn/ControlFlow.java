package dev.cairn;

import java.lang.ref.Reference;
import java.util.Objects;

/**
 * <b>Experimental</b> (control flow, C <code>CAIRN_EXPERIMENTAL</code>): may change in a minor release.
 *
 * Control flow (tf.cond, tf.while_loop) over Java lambdas.
 *
 * <pre>{@code
 * // sum of 0..n-1: loop variables (i, acc, n)
 * Tensor[] out = ControlFlow.whileLoop(ctx,
 *     (c, v) -> Ops.less(c, v[0], v[2]),
 *     (c, v) -> {
 *       try (Tensor one = Tensor.scalar(c, 1)) {
 *         return new Tensor[] {Ops.add(c, v[0], one), Ops.add(c, v[1], v[0]), v[2]};
 *       }
 *     },
 *     new Tensor[] {i0, acc0, n});
 * }</pre>
 *
 * <p><b>Eagerly</b> the lambdas run as called: {@link #cond} reads the predicate and calls one
 * branch, {@link #whileLoop} calls the condition and the body until the condition is false.
 *
 * <p><b>Inside a {@link CompiledFunction}'s body</b> they are captured: each lambda runs once,
 * while tracing, on symbolic tensors (both branches of a cond, the condition and the body of a
 * loop), and a replay picks the branch or counts the iterations from the data on the device. A
 * loop over a length given as an input is traced once and runs any number of iterations.
 * Lambdas may use tensors of the enclosing body and variables (captured).
 *
 * <p><b>Rules</b> (TensorFlow's graph mode): the predicate is a BOOL tensor of one element; both
 * branches return {@code numOutputs} tensors of equal dtypes and shapes; the body returns one
 * tensor per loop variable, each with its variable's dtype and shape. A violation throws {@link
 * CairnException} INVALID_ARGUMENT. A tape recording inside a compiled function differentiates a
 * traced cond, and a traced loop given maxIterations (the size of the stacks its gradient keeps;
 * without it, UNIMPLEMENTED). Eager control flow, and calling a compiled function under a tape, are
 * differentiable too.
 *
 * <p><b>Tensors</b> follow {@link CompiledFunction.Body}'s rules: a lambda's inputs are closed
 * after it returns, and the tensors it returns are taken and closed (returning an input is
 * fine). The operands and loop variables passed in stay the caller's; the tensors returned are
 * new and the caller closes them.
 *
 * <p><b>Errors.</b> An exception a lambda throws makes the call throw a {@link CairnException}
 * "&lt;which lambda&gt;: &lt;what was thrown&gt;" whose cause is that exception (code UNKNOWN, or
 * the code of a CairnException it threw); an {@link Error} is rethrown as is. Inside a compiled
 * function's body, letting it propagate makes {@link CompiledFunction#call} throw in turn.
 */
public final class ControlFlow {
  private ControlFlow() {}

  /** A branch of a cond, or a loop body: tensors in, tensors out. */
  @FunctionalInterface
  public interface Branch {
    /**
     * Computes the branch's results, or the loop's next variables.
     *
     * @param ctx the context to record into
     * @param inputs the operands or the loop variables, closed after the lambda returns
     * @return the results, which are taken (and closed)
     * @throws Exception anything; the cond or loop then throws a CairnException caused by it
     */
    Tensor[] apply(CairnContext ctx, Tensor[] inputs) throws Exception;
  }

  /** A loop condition: the loop variables in, a BOOL tensor of one element out. */
  @FunctionalInterface
  public interface Condition {
    /**
     * Whether the loop goes on.
     *
     * @param ctx the context to record into
     * @param vars the loop variables, closed after the lambda returns
     * @return a BOOL tensor of one element, which is taken (and closed)
     * @throws Exception anything; the loop then throws a CairnException caused by it
     */
    Tensor test(CairnContext ctx, Tensor[] vars) throws Exception;
  }

  /**
   * {@code thenBranch(operands)} when {@code pred} is true, else {@code elseBranch(operands)}; both
   * return {@code numOutputs} tensors. Returns the chosen branch's results (new tensors).
   *
   * @param ctx the context
   * @param pred the predicate: a BOOL tensor of one element
   * @param operands the tensors handed to the chosen branch
   * @param thenBranch the branch run when the predicate is true
   * @param elseBranch the branch run when the predicate is false
   * @param numOutputs how many tensors each branch or body returns
   * @return new tensors, which the caller closes
   */
  public static Tensor[] cond(CairnContext ctx, Tensor pred, Tensor[] operands, Branch thenBranch, Branch elseBranch,
      int numOutputs) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(pred, "pred");
    Objects.requireNonNull(thenBranch, "thenBranch");
    Objects.requireNonNull(elseBranch, "elseBranch");
    if (numOutputs < 0) throw new IllegalArgumentException("numOutputs must be >= 0, got " + numOutputs);
    long[] in = handles(operands, "operands");
    long[] out = new long[numOutputs];
    Lambdas lambdas = new Lambdas();
    long thenId = lambdas.register("cond's then branch", numOutputs, thenBranch::apply);
    long elseId = lambdas.register("cond's else branch", numOutputs, elseBranch::apply);
    try {
      CairnNative.cond(ctx.handle(), pred.handle(), in, thenId, elseId, out);
    } catch (CairnException e) {
      throw lambdas.failure("cond", e);
    } finally {
      lambdas.unregister();
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(pred);
      Reference.reachabilityFence(operands);
    }
    return tensors(out);
  }

  /**
   * While {@code cond(vars)} is true, {@code vars = body(vars)}; returns the final loop variables
   * (new tensors, one per loop variable). At least one loop variable.
   *
   * @param ctx the context
   * @param cond the loop condition
   * @param body the body, traced on first call of each input signature
   * @param loopVars the initial loop variables
   * @return new tensors, which the caller closes
   */
  public static Tensor[] whileLoop(CairnContext ctx, Condition cond, Branch body, Tensor[] loopVars) {
    return whileLoop(ctx, cond, body, loopVars, -1);
  }

  /**
   * Like {@link #whileLoop(CairnContext, Condition, Branch, Tensor[])}, stopping after {@code
   * maxIterations} iterations (TensorFlow's maximum_iterations); -1 for no limit.
   *
   * @param ctx the context
   * @param cond the loop condition
   * @param body the body, traced on first call of each input signature
   * @param loopVars the initial loop variables
   * @param maxIterations the most iterations to run (-1: no limit)
   * @return new tensors, which the caller closes
   */
  public static Tensor[] whileLoop(CairnContext ctx, Condition cond, Branch body, Tensor[] loopVars,
      long maxIterations) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(cond, "cond");
    Objects.requireNonNull(body, "body");
    long[] vars = handles(loopVars, "loopVars");
    Lambdas lambdas = new Lambdas();
    long condId = lambdas.register("whileLoop's cond", 1, (c, v) -> new Tensor[] {cond.test(c, v)});
    long bodyId = lambdas.register("whileLoop's body", vars.length, body::apply);
    try {
      return tensors(CairnNative.whileLoop(ctx.handle(), condId, bodyId, vars, maxIterations));
    } catch (CairnException e) {
      throw lambdas.failure("whileLoop", e);
    } finally {
      lambdas.unregister();
      Reference.reachabilityFence(ctx);
      Reference.reachabilityFence(loopVars);
    }
  }

  // The lambdas of one call, registered as callbacks for its duration (the C library calls them
  // only while cairn_cond / cairn_while_loop runs), and which of them threw.
  private static final class Lambdas {
    private final long[] ids = new long[2];
    private int count;
    private String failed; // the label of the lambda that threw, if one did

    Lambdas() {
      Callbacks.takeHostError(); // forget what a raw-layer caller left behind
    }

    long register(String label, int numOutputs, CompiledFunction.Body body) {
      long id = Callbacks.registerFunctionFn((c, in, out) -> {
        try {
          CompiledFunction.runBody(label, numOutputs, body, c, in, out);
        } catch (Throwable t) {
          failed = label;
          throw t;
        }
      });
      ids[count++] = id;
      return id;
    }

    void unregister() {
      for (int i = 0; i < count; ++i) Callbacks.unregisterFunctionFn(ids[i]);
    }

    // What the call throws for the C library's error `e`: the lambda's exception when one threw.
    RuntimeException failure(String call, CairnException e) {
      Throwable host = Callbacks.takeHostError();
      if (host == null) return e;
      return CompiledFunction.hostFailure(failed != null ? failed : call, host);
    }
  }

  private static long[] handles(Tensor[] tensors, String what) {
    Objects.requireNonNull(tensors, what);
    long[] out = new long[tensors.length];
    for (int i = 0; i < out.length; ++i) out[i] = Objects.requireNonNull(tensors[i], what + "[" + i + "]").handle();
    return out;
  }

  private static Tensor[] tensors(long[] handles) {
    Tensor[] out = new Tensor[handles.length];
    for (int i = 0; i < handles.length; ++i) out[i] = new Tensor(handles[i]);
    return out;
  }
}
