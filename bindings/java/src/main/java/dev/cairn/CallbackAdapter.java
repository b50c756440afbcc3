package dev.cairn;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Holds a {@link Callback} written in Java while the C library holds its cairn_callback (a JNI
 * global reference to this adapter is the C user_data, deleted by the release hook). The hooks
 * catch everything the user's code throws: it comes back to C as the hook's error status and is
 * kept here, so that {@link Model#fit} throws a CairnException whose cause is the original
 * exception. Package-private.
 */
final class CallbackAdapter {
  // Adapters the C library still holds (released() not called yet), for leak tests.
  private static final AtomicLong LIVE = new AtomicLong();

  // The hooks, in the order of cairn_callback_hooks (the bits of ModelNative.callbackCreate's mask).
  static final int TRAIN_BEGIN = 0;
  static final int TRAIN_END = 1;
  static final int EPOCH_BEGIN = 2;
  static final int EPOCH_END = 3;
  static final int BATCH_BEGIN = 4;
  static final int BATCH_END = 5;
  static final int TEST_END = 6;

  private static final ClassValue<Integer> MASKS = new ClassValue<>() {
    @Override
    protected Integer computeValue(Class<?> type) {
      return mask(type);
    }
  };

  private final Callback callback;
  private volatile Throwable error;

  CallbackAdapter(Callback callback) {
    this.callback = callback;
  }

  static long live() {
    return LIVE.get();
  }

  /** A new cairn_callback for {@code callback}, with only the hooks it overrides. */
  static long create(CallbackAdapter adapter) {
    long h = ModelNative.callbackCreate(adapter, MASKS.get(adapter.callback.getClass()));
    LIVE.incrementAndGet();
    return h;
  }

  /** The hooks {@code type} overrides (Callback's defaults do nothing, so C need not call them). */
  private static int mask(Class<?> type) {
    Object[][] hooks = {
      {"onTrainBegin", new Class<?>[] {Model.class}},
      {"onTrainEnd", new Class<?>[] {Model.class, Logs.class}},
      {"onEpochBegin", new Class<?>[] {Model.class, long.class}},
      {"onEpochEnd", new Class<?>[] {Model.class, long.class, Logs.class}},
      {"onTrainBatchBegin", new Class<?>[] {Model.class, long.class}},
      {"onTrainBatchEnd", new Class<?>[] {Model.class, long.class, Logs.class}},
      {"onTestEnd", new Class<?>[] {Model.class, Logs.class}},
    };
    int mask = 0;
    for (int i = 0; i < hooks.length; ++i) {
      try {
        if (type.getMethod((String) hooks[i][0], (Class<?>[]) hooks[i][1]).getDeclaringClass() != Callback.class) {
          mask |= 1 << i;
        }
      } catch (NoSuchMethodException e) {
        mask |= 1 << i; // cannot tell: call it
      }
    }
    return mask;
  }

  /** The exception a hook threw since the last call (null if none), cleared. */
  Throwable takeError() {
    Throwable t = error;
    error = null;
    return t;
  }

  // Called by the C trampoline: null, or what the hook threw (never thrown into C).
  private Throwable hook(int which, long modelHandle, long index, String[] names, double[] values) {
    Model.Lent lent = null;
    try {
      lent = Model.lent(modelHandle);
      Model model = lent.model();
      Logs logs = names == null ? null : new Logs(names, values);
      switch (which) {
        case TRAIN_BEGIN: callback.onTrainBegin(model); break;
        case TRAIN_END: callback.onTrainEnd(model, logs); break;
        case EPOCH_BEGIN: callback.onEpochBegin(model, index); break;
        case EPOCH_END: callback.onEpochEnd(model, index, logs); break;
        case BATCH_BEGIN: callback.onTrainBatchBegin(model, index); break;
        case BATCH_END: callback.onTrainBatchEnd(model, index, logs); break;
        case TEST_END: callback.onTestEnd(model, logs); break;
        default: throw new IllegalStateException("unknown hook " + which);
      }
      return null;
    } catch (Throwable t) {
      error = t;
      return t;
    } finally {
      if (lent != null) lent.close();
    }
  }

  // Called by the C release hook, once.
  private void released() {
    LIVE.decrementAndGet();
  }

  /** A learning-rate schedule for cairn_callback_learning_rate_scheduler. */
  static final class Schedule {
    private final Callback.LearningRateSchedule fn;
    private volatile Throwable error;

    Schedule(Callback.LearningRateSchedule fn) {
      this.fn = fn;
    }

    // Called by the C trampoline: {rate}, or null after keeping what fn threw for takeError().
    private double[] schedule(long epoch, double lr) {
      try {
        return new double[] {fn.rate(epoch, lr)};
      } catch (Throwable t) {
        error = t;
        return null;
      }
    }

    // Called by the C trampoline after schedule() returned null.
    private Throwable lastError() {
      return error;
    }

    /** What the schedule threw since the last call (null if none), cleared. */
    Throwable takeError() {
      Throwable t = error;
      error = null;
      return t;
    }
  }
}
