package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.LongUnaryOperator;

/**
 * A context's device configuration (tf.config), reached through {@link CairnContext#devices()}:
 * physical devices and their memory heaps, visible devices, memory growth, splitting a physical
 * device into logical devices, thread counts, and each logical device's memory counts.
 *
 * <p>Configure a context right after creating it: its devices initialize at its first tensor, op,
 * device lookup or {@link #logicalDevices()}, and from then on every setter throws {@link
 * CairnException} FAILED_PRECONDITION saying so (TensorFlow's "cannot be modified after being
 * initialized"). Physical devices are "cpu:0" and "vulkan:N" (the driver's order); logical devices
 * are what tensors live on: "cpu" (or "cpu:0".."cpu:N-1" once the CPU is split) and "vulkan:0"..,
 * counting the visible Vulkan devices and their splits in order.
 *
 * <pre>{@code
 * try (CairnContext ctx = new CairnContext()) {
 *   ctx.devices().setLogicalDevices("cpu:0", 0, 4096); // cpu:0 without a limit, cpu:1 with 4 KiB
 *   try (Tensor x = Tensor.of(ctx, new float[256], 256); Tensor y = x.copyTo(ctx, "cpu:1")) {
 *     long held = ctx.devices().memoryInfo("cpu:1").current(); // 1024
 *   }
 * }
 * }</pre>
 *
 * <p>Errors are {@link CairnException}s carrying the C code and message: NOT_FOUND for an unknown
 * device, INVALID_ARGUMENT for bad values, FAILED_PRECONDITION once the devices are initialized; a
 * null argument is a NullPointerException. A DeviceConfig holds its context and fails as the
 * context does once that is closed.
 */
public final class DeviceConfig {
  private final CairnContext ctx;

  DeviceConfig(CairnContext ctx) {
    this.ctx = ctx;
  }

  /**
   * One physical device (cairn_physical_device_info): the CPU ("cpu:0", always first) or a Vulkan
   * device ("vulkan:N"). Sizes are bytes (unsigned in C, far below 2^63 on real devices).
   *
   * @param name "cpu:0", "vulkan:0"
   * @param type "CPU" or "VULKAN"
   * @param description "x86_64, 2 cores"; a Vulkan device's driver name
   * @param deviceType "cpu" for the host; for Vulkan "discrete", "integrated", "virtual", "cpu" or "other"
   * @param memory bytes the device may hold: RAM, or the largest device-local heap's budget
   * @param queues compute queues; the logical devices of a split device take one each where there are several
   * @param heaps its memory heaps, queried now
   */
  public record PhysicalDevice(String name, String type, String description, String deviceType, long memory,
      int queues, List<Heap> heaps) {}

  /**
   * One memory heap of a physical device (cairn_memory_heap).
   *
   * @param size bytes
   * @param budget bytes the process may use now: the driver's VK_EXT_memory_budget figure where it
   *     is sane, else the size
   * @param usage bytes the process uses (0 where the driver does not say)
   * @param deviceLocal device-local memory (always true for the CPU's heap)
   */
  public record Heap(long size, long budget, long usage, boolean deviceLocal) {}

  /**
   * One logical device, what tensors live on (cairn_logical_device_info).
   *
   * @param name "cpu", "cpu:1", "vulkan:0"
   * @param physical the physical device it is made from
   * @param memoryLimit bytes; 0: no limit
   */
  public record LogicalDevice(String name, String physical, long memoryLimit) {}

  /**
   * A logical device's memory (cairn_memory_info, tf.config.experimental.get_memory_info).
   *
   * @param current bytes held by its tensors now
   * @param peak the most held since creation or the last {@link DeviceConfig#resetMemoryStats}
   * @param limit its memory limit; 0: none
   * @param budget bytes it may use now: RAM on the CPU, the driver's live budget on Vulkan
   */
  public record MemoryStats(long current, long peak, long limit, long budget) {}

  /**
   * The thread counts of a context; 0 = all cores.
   *
   * @param intraOp threads for one op's work, counting the caller
   * @param interOp threads for independent work, such as a mirrored strategy's replicas
   */
  public record Threads(int intraOp, int interOp) {}

  /**
   * The physical devices, the CPU first, each with its heaps. Listing loads the Vulkan driver but
   * does not initialize the context's devices.
   *
   * @return the physical devices, unmodifiable
   */
  public List<PhysicalDevice> physicalDevices() {
    return list(CairnNative::contextPhysicalDeviceCount, DeviceConfig::physical);
  }

  private static PhysicalDevice physical(long h, long i) {
    PhysicalDeviceInfo d = CairnNative.contextPhysicalDevice(h, i);
    List<Heap> heaps = new ArrayList<>(d.numHeaps);
    for (long k = 0; k < d.numHeaps; ++k) {
      MemoryHeap m = CairnNative.contextPhysicalDeviceHeap(h, i, k);
      heaps.add(new Heap(m.size, m.budget, m.usage, m.deviceLocal != 0));
    }
    return new PhysicalDevice(d.name, d.type, d.description, d.deviceType, d.memory, d.queues,
        Collections.unmodifiableList(heaps));
  }

  /** Item {@code index} of a list the C API gives by count and index. */
  private interface Item<T> {
    T get(long ctx, long index);
  }

  /** The items 0..count(ctx)-1 of a list, unmodifiable. */
  private <T> List<T> list(LongUnaryOperator count, Item<T> item) {
    long h = ctx.handle();
    try {
      long n = count.applyAsLong(h);
      List<T> out = new ArrayList<>();
      for (long i = 0; i < n; ++i) out.add(item.get(h, i));
      return Collections.unmodifiableList(out);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Makes only these physical devices (and the CPU, always) visible: logical devices are made from
   * them. No names hides every Vulkan device. The environment variable CAIRN_VISIBLE_DEVICES
   * ("cpu:0,vulkan:1") does the same when a context is created. NOT_FOUND names an unknown device;
   * FAILED_PRECONDITION once the devices are initialized.
   *
   * @param names physical device names such as "vulkan:1"
   */
  public void setVisibleDevices(String... names) {
    Objects.requireNonNull(names, "names");
    Object[] bytes = new Object[names.length];
    for (int i = 0; i < names.length; ++i) {
      bytes[i] = NativeResources.cstr(Objects.requireNonNull(names[i], "names[" + i + "]"));
    }
    try {
      CairnNative.contextSetVisibleDevices(ctx.handle(), bytes);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * The visible physical devices, e.g. ["cpu:0", "vulkan:0"].
   *
   * @return the visible physical devices, unmodifiable
   */
  public List<String> visibleDevices() {
    String list;
    try {
      list = CairnNative.contextVisibleDevices(ctx.handle());
    } finally {
      Reference.reachabilityFence(ctx);
    }
    return list.isEmpty() ? List.of() : List.of(list.split(","));
  }

  /**
   * Sets the memory growth of a Vulkan physical device: true (the default) allocates as tensors
   * need memory; false reserves each of its logical devices' memory limit (or most of the budget
   * without one) when the device is created. INVALID_ARGUMENT for the CPU, NOT_FOUND for an
   * unknown device, FAILED_PRECONDITION once the devices are initialized.
   *
   * @param physical a physical device name such as "vulkan:0"
   * @param grow whether memory grows on demand
   */
  public void setMemoryGrowth(String physical, boolean grow) {
    byte[] name = NativeResources.cstr(Objects.requireNonNull(physical, "physical"));
    try {
      CairnNative.contextSetMemoryGrowth(ctx.handle(), name, grow ? 1 : 0);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * The memory growth setting of a physical device (true for the CPU).
   *
   * @param physical a physical device name such as "vulkan:0"
   * @return whether memory grows on demand
   */
  public boolean memoryGrowth(String physical) {
    byte[] name = NativeResources.cstr(Objects.requireNonNull(physical, "physical"));
    try {
      return CairnNative.contextMemoryGrowth(ctx.handle(), name) != 0;
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Splits physical device {@code physical} ("cpu:0", "vulkan:0") into one logical device per
   * memory limit given (1 to 64; 0 means no limit), to run multi-device code on one device; a
   * single limit caps the whole device. The CPU's become "cpu:0".."cpu:N-1"; Vulkan's are numbered
   * across the visible Vulkan devices. INVALID_ARGUMENT for a count out of range or limits above
   * the device's memory (alone or added up), NOT_FOUND for an unknown device, FAILED_PRECONDITION
   * when the device was configured already or the devices are initialized.
   *
   * @param physical a physical device name
   * @param memoryLimits each logical device's memory limit in bytes; 0: none
   */
  public void setLogicalDevices(String physical, long... memoryLimits) {
    byte[] name = NativeResources.cstr(Objects.requireNonNull(physical, "physical"));
    long[] limits = Objects.requireNonNull(memoryLimits, "memoryLimits").clone();
    try {
      CairnNative.contextSetLogicalDevices(ctx.handle(), name, limits);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * The logical devices, the CPU's first. This initializes the devices, which closes the
   * configuration.
   *
   * @return the logical devices, unmodifiable
   */
  public List<LogicalDevice> logicalDevices() {
    return list(CairnNative::contextLogicalDeviceCount, (h, i) -> {
      LogicalDeviceInfo d = CairnNative.contextLogicalDevice(h, i);
      return new LogicalDevice(d.name, d.physical, d.memoryLimit);
    });
  }

  /**
   * Sets the thread counts; 0 = all cores. INVALID_ARGUMENT outside 0..4096, FAILED_PRECONDITION
   * once the devices are initialized.
   *
   * @param intraOp threads for one op's work, counting the caller
   * @param interOp threads for independent work, such as a mirrored strategy's replicas
   */
  public void setThreads(int intraOp, int interOp) {
    try {
      CairnNative.contextSetThreads(ctx.handle(), intraOp, interOp);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * The thread counts set; 0 = all cores.
   *
   * @return the intra-op and inter-op thread counts
   */
  public Threads threads() {
    int[] counts;
    try {
      counts = threads(ctx.handle());
    } finally {
      Reference.reachabilityFence(ctx);
    }
    return new Threads(counts[0], counts[1]);
  }

  /**
   * The memory of logical device {@code device} ("cpu", "cpu:1", "vulkan:0"), creating it if
   * needed. NOT_FOUND for an unknown device.
   *
   * @param device a logical device name
   * @return its current and peak use, limit and budget
   */
  public MemoryStats memoryInfo(String device) {
    byte[] name = NativeResources.cstr(Objects.requireNonNull(device, "device"));
    MemoryInfo m;
    try {
      m = CairnNative.contextMemoryInfo(ctx.handle(), name);
    } finally {
      Reference.reachabilityFence(ctx);
    }
    return new MemoryStats(m.current, m.peak, m.limit, m.budget);
  }

  /**
   * Sets the device's peak to its current use. NOT_FOUND for an unknown device.
   *
   * @param device a logical device name
   */
  public void resetMemoryStats(String device) {
    byte[] name = NativeResources.cstr(Objects.requireNonNull(device, "device"));
    try {
      CairnNative.contextResetMemoryStats(ctx.handle(), name);
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Whether the context's devices are initialized (the configuration is then closed).
   *
   * @return whether the devices are initialized
   */
  public boolean initialized() {
    try {
      return CairnNative.contextDevicesInitialized(ctx.handle()) != 0;
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  @Override
  public String toString() {
    return "DeviceConfig(" + ctx + ")";
  }

  /** cairn_context_threads as {intra_op, inter_op} (src/main/native/cairn_jni_devices.c). */
  private static native int[] threads(long ctx);
}
