package dev.cairn;

import dev.cairn.raw.CairnNative;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;

/**
 * What {@link Checkpoint#restore} matched (TensorFlow's load status). The asserts throw {@link
 * CairnException} with code FAILED_PRECONDITION naming what went unmatched, and return this
 * status, so they chain. Closing it does not stop deferred restores while the checkpoint lives.
 */
public final class RestoreStatus implements AutoCloseable {
  private final long handle;
  private final Cleaner.Cleanable cleanable;
  private volatile boolean closed;

  RestoreStatus(long handle) {
    this.handle = handle;
    this.cleanable = NativeResources.CLEANER.register(this, new Release(handle));
  }

  private static final class Release implements Runnable {
    private final long handle;

    Release(long handle) {
      this.handle = handle;
    }

    @Override
    public void run() {
      CairnNative.restoreStatusFree(handle);
    }
  }

  /** Passes when every checkpoint value was restored and every live object under the root matched. */
  public RestoreStatus assertConsumed() {
    long h = handle();
    try {
      CairnNative.restoreStatusAssertConsumed(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  /** Passes when every live variable under the root was matched. */
  public RestoreStatus assertExistingObjectsMatched() {
    long h = handle();
    try {
      CairnNative.restoreStatusAssertExistingObjectsMatched(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  /** Silences the warning logged when checkpoint values were never restored. */
  public RestoreStatus expectPartial() {
    long h = handle();
    try {
      CairnNative.restoreStatusExpectPartial(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  long handle() {
    if (closed) throw new IllegalStateException("the RestoreStatus is closed");
    return handle;
  }

  public boolean isClosed() {
    return closed;
  }

  /** Frees the status. Idempotent. */
  @Override
  public void close() {
    closed = true;
    cleanable.clean();
  }
}
