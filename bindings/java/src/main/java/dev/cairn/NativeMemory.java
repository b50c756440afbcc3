package dev.cairn;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The data bytes of the tensors this binding holds open, and the collections they trigger.
 *
 * <p>A tensor's data lives in C, where the Java collector does not see it: a loop that leaves its
 * tensors to the backstop makes little Java garbage, so collections (and with them the phantom
 * references that free the data) come far too rarely (issue 14). The JDK has no public API to
 * report off-heap memory to the collector (.NET's {@code GC.AddMemoryPressure} has no Java
 * counterpart); the JDK's own direct buffers count their reserved bytes and call {@code
 * System.gc()} when a limit is reached (java.nio.Bits.reserveMemory). This class does the same for
 * tensors, with a GOGC-like goal instead of a fixed limit: when the data of open tensors grew by
 * {@link #setGcPercent} percent (default 100) since the last collection it started, and by at least
 * {@link #setGcMinimum} bytes (default 64 MiB), the thread making a tensor calls {@code System.gc()},
 * and the backstop's daemon thread then frees what was unreachable. A JVM run with {@code
 * -XX:+DisableExplicitGC} ignores that call: close tensors or use a {@link TensorScope} there.
 * The system property {@code cairn.nativeGc} (or the environment's {@code CAIRN_NATIVE_GC}) sets
 * the percent at start: a number, or {@code off}.
 */
public final class NativeMemory {
  private static final AtomicLong LIVE = new AtomicLong(); // data bytes of open tensors
  private static final AtomicBoolean RUNNING = new AtomicBoolean();
  private static final AtomicLong COLLECTIONS = new AtomicLong();
  private static volatile long floor; // the least LIVE has been since the last collection here
  private static volatile long trigger; // a tensor made while LIVE is above this collects
  private static volatile int percent = 100;
  private static volatile long minimum = 64L << 20;

  static {
    String setting = System.getProperty("cairn.nativeGc", System.getenv("CAIRN_NATIVE_GC"));
    if (setting != null) {
      if (setting.toLowerCase(Locale.ROOT).equals("off")) {
        percent = -1;
      } else {
        try {
          percent = Integer.parseInt(setting.trim());
        } catch (NumberFormatException e) {
          // not a number: keep the default, as GOGC does with a bad value
        }
      }
    }
    setFloor(0);
  }

  private NativeMemory() {}

  // Sets the floor and the trigger that follows from it; callers hold the class's lock (or run
  // its static initializer).
  private static void setFloor(long newFloor) {
    floor = newFloor;
    int p = percent;
    trigger = p < 0 ? Long.MAX_VALUE : newFloor + Math.max(newFloor / 100 * p, minimum);
  }

  /** {@code bytes} more are held by a new tensor; collects when that crosses the trigger. */
  static void allocated(long bytes) {
    if (LIVE.addAndGet(bytes) > trigger) collect();
  }

  /** {@code bytes} were freed; a new low lowers the floor, and with it the trigger. */
  static void freed(long bytes) {
    if (LIVE.addAndGet(-bytes) < floor) lowerFloor();
  }

  // Reads LIVE under the lock that collect() sets the floor under: otherwise collect() could
  // write a floor read before the backstop's last frees, and keep the trigger too high.
  private static synchronized void lowerFloor() {
    long live = LIVE.get();
    if (live < floor) setFloor(live);
  }

  // One collection at a time, on the thread that crossed the trigger (which slows the fastest
  // allocator down until the backstop caught up); a thread that finds one running goes on.
  private static void collect() {
    if (!RUNNING.compareAndSet(false, true)) return;
    try {
      System.gc();
      COLLECTIONS.incrementAndGet();
      synchronized (NativeMemory.class) {
        setFloor(LIVE.get());
      }
    } finally {
      RUNNING.set(false);
    }
  }

  /**
   * The size of the data of the tensors this binding holds open (closed ones and the ones the
   * backstop freed are not counted). A tensor sharing its buffer with another counts in full.
   *
   * @return bytes of data held by open tensors
   */
  public static long liveBytes() {
    return LIVE.get();
  }

  /**
   * How many collections the native bytes have triggered so far.
   *
   * @return how many times this class called {@code System.gc()}
   */
  public static long collections() {
    return COLLECTIONS.get();
  }

  /**
   * Sets how much {@link #liveBytes()} may grow, in percent of what it was after the last
   * collection, before {@code System.gc()} runs: 100 (the default) lets it double, a negative
   * value turns the trigger off.
   *
   * @param newPercent the growth in percent; negative: off
   * @return the previous setting
   */
  public static synchronized int setGcPercent(int newPercent) {
    int old = percent;
    percent = newPercent;
    setFloor(floor);
    return old;
  }

  /**
   * Sets the least growth of {@link #liveBytes()} that triggers a collection (default 64 MiB).
   *
   * @param bytes the least growth in bytes (negative counts as 0)
   * @return the previous setting
   */
  public static synchronized long setGcMinimum(long bytes) {
    long old = minimum;
    minimum = Math.max(bytes, 0);
    setFloor(floor);
    return old;
  }
}
