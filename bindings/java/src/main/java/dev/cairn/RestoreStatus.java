package dev.cairn;

import java.lang.ref.Reference;

/**
 * What {@link Checkpoint#restore} matched (TensorFlow's load status). The asserts throw {@link
 * CairnException} with code FAILED_PRECONDITION naming what went unmatched, and return this
 * status, so they chain. Closing it does not stop deferred restores: they wait on the objects.
 */
public final class RestoreStatus extends NativeHandle {
  RestoreStatus(long handle) {
    super(handle, CairnNative::restoreStatusFree);
  }

  /**
   * Passes when every checkpoint value was restored and every live object under the root matched.
   *
   * @return this
   */
  public RestoreStatus assertConsumed() {
    long h = handle();
    try {
      CairnNative.restoreStatusAssertConsumed(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  /**
   * Passes when every live variable under the root was matched.
   *
   * @return this
   */
  public RestoreStatus assertExistingObjectsMatched() {
    long h = handle();
    try {
      CairnNative.restoreStatusAssertExistingObjectsMatched(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }

  /**
   * Silences the warning logged when checkpoint values were never restored.
   *
   * @return this
   */
  public RestoreStatus expectPartial() {
    long h = handle();
    try {
      CairnNative.restoreStatusExpectPartial(h);
    } finally {
      Reference.reachabilityFence(this);
    }
    return this;
  }
}
