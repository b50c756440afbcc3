package dev.cairn;

import java.lang.ref.Reference;
import java.util.AbstractList;
import java.util.List;
import java.util.Objects;

/** A stopped profile ({@link Profiler#stop()}); cairn_profile. Close it when done. */
public final class Profile extends NativeHandle {
  Profile(long handle) {
    super(handle, CairnNative::profileFree);
  }

  /**
   * How many events the profile holds.
   *
   * @return the count
   */
  public long eventCount() {
    long h = handle();
    try {
      return CairnNative.profileEventCount(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * How many events were dropped because max_events were already kept.
   *
   * @return the count
   */
  public long dropped() {
    long h = handle();
    try {
      return CairnNative.profileDropped(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Event {@code index}.
   *
   * @param index in [0, {@link #eventCount()})
   * @return the event
   * @throws CairnException OUT_OF_RANGE past the last event
   */
  public Profiler.Event event(long index) {
    String[] names = new String[3];
    long h = handle();
    try {
      long[] times = IoNative.profileEvent(h, index, names);
      return new Profiler.Event(names[0], names[1], names[2], times[0], times[1]);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The events, sorted by start (a view reading each event when asked; valid while the profile is
   * open).
   *
   * @return the events
   */
  public List<Profiler.Event> events() {
    int n = Math.toIntExact(eventCount());
    return new AbstractList<>() {
      @Override
      public Profiler.Event get(int index) {
        Objects.checkIndex(index, n);
        return event(index);
      }

      @Override
      public int size() {
        return n;
      }
    };
  }

  /**
   * The profile as Chrome trace-event JSON (Perfetto, chrome://tracing).
   *
   * @return the JSON
   */
  public String chromeTrace() {
    long h = handle();
    try {
      return CairnNative.profileChromeTrace(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Writes the Chrome trace-event JSON to {@code path}.
   *
   * @param path the file
   * @throws CairnException UNAVAILABLE naming the path
   */
  public void exportChromeTrace(String path) {
    byte[] p = NativeResources.cstr(Objects.requireNonNull(path, "path"));
    long h = handle();
    try {
      CairnNative.profileExportChromeTrace(h, p);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Writes the trace gzipped where TensorBoard's profile plugin looks:
   * {@code <logdir>/plugins/profile/<runName>/<hostname>.trace.json.gz}.
   *
   * @param logdir the log directory
   * @param runName the run's name; null or "" for the date and time
   * @return the file's path
   * @throws CairnException INVALID_ARGUMENT for a run name with '/'; UNAVAILABLE naming the path
   */
  public String exportToLogdir(String logdir, String runName) {
    byte[] d = NativeResources.cstr(Objects.requireNonNull(logdir, "logdir"));
    byte[] r = NativeResources.cstr(runName);
    long h = handle();
    try {
      return CairnNative.profileExportToLogdir(h, d, r);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
