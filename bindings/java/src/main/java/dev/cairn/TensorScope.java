package dev.cairn;

import java.util.ArrayList;

/**
 * Frees, when it closes, every {@link Tensor} made inside it on its thread, except those kept
 * ({@link #keep}): the tensors of a training step (activations, losses, gradients, values read
 * from variables) go when the step ends, closed or not.
 *
 * <pre>{@code
 * try (TensorScope s = TensorScope.open()) {
 *   Tensor loss = Loss.compute(...);   // in s: freed when s closes
 *   s.keep(w);                         // w outlives s; close it, or leave it to the backstop
 * }
 * }</pre>
 *
 * <p>A tensor is in the innermost scope open on the thread that made it, whatever made it
 * ({@code Tensor.of}, ops, layers, losses, a tape's gradients, {@code Variable.read}, compiled
 * functions, iterators). Scopes nest. A scope belongs to the thread that opened it: tensors made on
 * other threads are not in it, and {@link #close()} on another thread throws FAILED_PRECONDITION
 * and frees nothing. Closing a scope also closes the scopes opened inside it and left open. Using
 * a tensor after its scope freed it throws {@link CairnException} FAILED_PRECONDITION
 * "&lt;Class.method&gt;: tensor is closed (freed by its TensorScope ...)".
 */
public final class TensorScope implements AutoCloseable {
  private static final ThreadLocal<TensorScope> CURRENT = new ThreadLocal<>();
  // Scopes open on any thread: while none is, making a tensor skips the thread-local lookup.
  private static volatile int open;

  private final Thread thread = Thread.currentThread();
  private final TensorScope parent;
  private final ArrayList<Tensor> tensors = new ArrayList<>();
  private boolean closed;

  private TensorScope(TensorScope parent) {
    this.parent = parent;
  }

  /**
   * Opens a scope on the calling thread, inside the one already open there if any.
   *
   * @return the new scope; close it on this thread (try-with-resources)
   */
  public static TensorScope open() {
    TensorScope s = new TensorScope(CURRENT.get());
    CURRENT.set(s);
    synchronized (TensorScope.class) {
      ++open;
    }
    return s;
  }

  /** Puts a tensor just made on this thread into the thread's innermost open scope, if any. */
  static void adopt(Tensor t) {
    if (open == 0) return;
    TensorScope s = CURRENT.get();
    if (s != null) s.tensors.add(t);
  }

  private boolean remove(Tensor t) {
    for (int i = tensors.size() - 1; i >= 0; --i) { // kept tensors are usually recent ones
      if (tensors.get(i) == t) {
        tensors.set(i, null);
        return true;
      }
    }
    return false;
  }

  /**
   * Takes tensors out of this scope and the scopes around it, so that no scope frees them: the
   * caller owns them (close them, or leave them to the backstop). Tensors in no scope, and nulls,
   * are ignored. Call it on the scope's thread, before close.
   *
   * @param kept the tensors to keep
   * @return the first of {@code kept} (null when none), so that {@code return s.keep(t);} works
   */
  public Tensor keep(Tensor... kept) {
    checkThread("TensorScope.keep");
    for (Tensor t : kept) {
      for (TensorScope in = this; in != null && t != null; in = in.parent) {
        if (in.remove(t)) break;
      }
    }
    return kept.length == 0 ? null : kept[0];
  }

  /**
   * How many tensors the scope holds (made in it and not kept, closed ones included).
   *
   * @return how many tensors the scope holds
   */
  public int size() {
    int n = 0;
    for (Tensor t : tensors) if (t != null) ++n;
    return n;
  }

  private void checkThread(String method) {
    if (Thread.currentThread() != thread) {
      throw new CairnException(Code.FAILED_PRECONDITION,
          method + ": the scope belongs to thread \"" + thread.getName() + "\" (use it on the thread that opened it)");
    }
  }

  /**
   * Frees the scope's tensors, after those of the scopes opened inside it and left open. Closing
   * twice does nothing.
   */
  @Override
  public void close() {
    if (closed) return;
    checkThread("TensorScope.close");
    TensorScope in = CURRENT.get();
    while (in != null && in != this) in = in.parent;
    if (in == null) return; // not open on this thread any more (an outer scope closed it)
    for (TensorScope s = CURRENT.get(); ; s = s.parent) {
      s.closed = true;
      synchronized (TensorScope.class) {
        --open;
      }
      for (Tensor t : s.tensors) if (t != null) t.freeInScope();
      s.tensors.clear();
      if (s == this) break;
    }
    if (parent == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(parent);
    }
  }
}
