package dev.cairn;

import java.util.Objects;

/**
 * The process-wide profiler (tf.profiler, tf.summary.trace_on / trace_export). While on, each eager
 * op, each node of a compiled function's replay (and each replay) and each batch of GPU work records
 * its name, device, start and duration.
 *
 * <pre>{@code
 * Profiler.start();
 * ... run ops ...
 * try (Profile p = Profiler.stop()) {
 *   p.exportToLogdir("logs", null); // TensorBoard's profile tab
 *   Files.writeString(Path.of("trace.json"), p.chromeTrace()); // Perfetto, chrome://tracing
 * }
 * }</pre>
 */
public final class Profiler {
  private Profiler() {}

  /** Turns the profiler on with the default options. */
  public static void start() {
    start(null);
  }

  /**
   * Turns the profiler on, clearing what an earlier profile left.
   *
   * @param options the options; null for the defaults
   * @throws CairnException FAILED_PRECONDITION when it is already on
   */
  public static void start(Options options) {
    Options o = options == null ? new Options() : options;
    NativeLibrary.check();
    CairnNative.profilerStart(o.set, o.maxEvents, o.vulkanTimestamps ? 1 : 0);
  }

  /**
   * Whether the profiler is on.
   *
   * @return whether it is on
   */
  public static boolean active() {
    NativeLibrary.check();
    return CairnNative.profilerActive() != 0;
  }

  /**
   * Turns the profiler off and hands over what it recorded, events sorted by start.
   *
   * @return the profile; close it
   * @throws CairnException FAILED_PRECONDITION when it is off
   */
  public static Profile stop() {
    NativeLibrary.check();
    return new Profile(CairnNative.profilerStop());
  }

  /**
   * New default options.
   *
   * @return options with every field at its default
   */
  public static Options options() {
    return new Options();
  }

  /** Options of {@link #start(Options)} (cairn_profiler_options). */
  public static final class Options {
    private long set;
    private long maxEvents = 1_000_000;
    private boolean vulkanTimestamps = true;

    /** Default options. */
    public Options() {}

    /**
     * Events kept (later ones are counted as dropped); default 1000000.
     *
     * @param maxEvents more than 0
     * @return this
     */
    public Options maxEvents(long maxEvents) {
      this.maxEvents = maxEvents;
      set |= CairnNative.PROFILER_OPTIONS_MAX_EVENTS;
      return this;
    }

    /**
     * GPU timestamps on Vulkan devices that support them (default true).
     *
     * @param on whether to take them
     * @return this
     */
    public Options vulkanTimestamps(boolean on) {
      this.vulkanTimestamps = on;
      set |= CairnNative.PROFILER_OPTIONS_VULKAN_TIMESTAMPS;
      return this;
    }
  }

  /**
   * One recorded event.
   *
   * @param name the op ("Add"), replayed node ("MatMul_3"), function or GPU batch
   * @param category "eager", "graph", "function" or "gpu"
   * @param device "cpu", "vulkan:0"
   * @param startNs the start in nanoseconds from {@link #start}
   * @param durationNs the duration in nanoseconds
   */
  public record Event(String name, String category, String device, long startNs, long durationNs) {
    /**
     * An event.
     *
     * @param name the name
     * @param category the category
     * @param device the device
     * @param startNs the start
     * @param durationNs the duration
     */
    public Event {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(category, "category");
      Objects.requireNonNull(device, "device");
    }
  }
}
