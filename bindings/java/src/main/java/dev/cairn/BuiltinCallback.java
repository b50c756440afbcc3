package dev.cairn;

/**
 * A callback the C library implements (ModelCheckpoint, TensorBoard, EarlyStopping, ...), made by
 * the static methods of {@link Callback}. It owns a cairn_callback: {@link #close()} frees it (a
 * fit that uses it keeps it alive until it ends). It may be passed to several fits, one at a time.
 */
public final class BuiltinCallback extends NativeHandle implements Callback {
  private final String kind;
  private final CallbackAdapter.Schedule schedule; // the LearningRateScheduler's, else null

  BuiltinCallback(long handle, String kind) {
    this(handle, kind, null);
  }

  BuiltinCallback(long handle, String kind, CallbackAdapter.Schedule schedule) {
    super(handle, CairnNative::callbackFree);
    this.kind = kind;
    this.schedule = schedule;
  }

  /** What the schedule of a LearningRateScheduler threw (null if none or another kind), cleared. */
  Throwable takeHostError() {
    return schedule == null ? null : schedule.takeError();
  }

  @Override
  public String toString() {
    return kind + (isClosed() ? "(closed)" : "");
  }
}
