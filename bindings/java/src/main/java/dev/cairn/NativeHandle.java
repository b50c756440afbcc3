package dev.cairn;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * What every class owning one native handle shares: the handle, the closed flag, and a {@link
 * Cleaner} registration that frees the handle when its owner is collected without {@link
 * #close()}. Callers fence the owner ({@code Reference.reachabilityFence(this)}) after a native
 * call that uses {@link #handle()}, so that the Cleaner cannot free it mid-call.
 */
abstract class NativeHandle implements AutoCloseable {
  // Owned handles not yet freed (by close() or by the Cleaner); tests wait on it.
  private static final AtomicLong LIVE = new AtomicLong();

  private final long handle;
  private final Cleaner.Cleanable cleanable; // null for a handle owned elsewhere
  private volatile boolean closed;

  /**
   * Takes ownership of {@code handle}, which {@code free} releases (null: borrowed, never freed
   * here and {@link #close()} is up to the subclass).
   */
  NativeHandle(long handle, LongConsumer free) {
    this.handle = handle;
    if (free != null) LIVE.incrementAndGet();
    this.cleanable = free == null ? null : NativeResources.CLEANER.register(this, new Release(handle, free));
  }

  /** How many owned handles are not freed yet (for leak tests). */
  static long liveHandles() {
    return LIVE.get();
  }

  // Frees the handle; holds no reference to its owner, so it can run after collection.
  private static final class Release implements Runnable {
    private final long handle;
    private final LongConsumer free;

    Release(long handle, LongConsumer free) {
      this.handle = handle;
      this.free = free;
    }

    @Override
    public void run() {
      free.accept(handle);
      LIVE.decrementAndGet();
    }
  }

  /** The handle; throws IllegalStateException (see {@link #checkClosed()}) once closed. */
  final long handle() {
    checkClosed();
    return handle;
  }

  /** Throws IllegalStateException "the &lt;class&gt; is closed" when this was closed. */
  void checkClosed() {
    if (closed) throw new IllegalStateException("the " + getClass().getSimpleName() + " is closed");
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  /** Frees the handle. Idempotent and thread-safe. */
  @Override
  public void close() {
    closed = true;
    if (cleanable != null) cleanable.clean();
  }
}
