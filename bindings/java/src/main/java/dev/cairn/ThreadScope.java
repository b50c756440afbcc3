package dev.cairn;

/**
 * A scope the native library keeps per thread (a device scope, a strategy's scope): it belongs to
 * the thread that opened it, and {@link #close()} on another thread throws FAILED_PRECONDITION and
 * closes nothing. Package-private.
 */
abstract class ThreadScope implements AutoCloseable {
  private final Thread thread = Thread.currentThread();
  private boolean closed;

  /** Leaves the native scope (on the thread that opened it). */
  abstract void exit();

  /**
   * Closes the scope. Closing twice does nothing.
   *
   * @throws CairnException FAILED_PRECONDITION on a thread other than the one that opened it
   */
  @Override
  public void close() {
    if (closed) return;
    if (Thread.currentThread() != thread) {
      throw new CairnException(Code.FAILED_PRECONDITION,
          getClass().getSimpleName() + ".close: the scope belongs to thread \"" + thread.getName()
              + "\" (close it on the thread that opened it)");
    }
    exit();
    closed = true;
  }
}
