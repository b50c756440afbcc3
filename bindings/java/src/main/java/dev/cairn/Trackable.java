package dev.cairn;

import java.lang.ref.Reference;

/**
 * A trackable (TensorFlow's Trackable): an object whose attributes, set with {@link #set}, are
 * tracked edges kept in the order they were first set. Also the kind of a checkpoint's root.
 */
public final class Trackable extends CairnObject {
  Trackable(long handle) {
    super(handle);
  }

  Trackable(long handle, Checkpoint lender) {
    super(handle, lender);
  }

  /**
   * A new, empty trackable; it keeps {@code ctx}'s runtime alive.
   *
   * @param ctx the context
   * @return a new, empty trackable; it keeps {@code ctx}'s runtime alive
   */
  public static Trackable create(CairnContext ctx) {
    long c = ctx.handle();
    try {
      return new Trackable(CairnNative.trackableCreate(c));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }
}
