package dev.cairn;

/**
 * The Vulkan settings of a context (cairn_vulkan_options); a field not set keeps the C default:
 * Cairn's own instance and device, no memory limit, no CPU fallback. The external-device fields
 * ({@link #external}) are experimental in the C API: their meaning may still change. Not
 * thread-safe to mutate.
 */
public final class VulkanOptions {
  private long set; // CairnNative.VULKAN_OPTIONS_* of the fields set
  private long instance;
  private long physicalDevice;
  private long device;
  private int queueFamily;
  private long queue;
  private long memoryLimit;
  private boolean cpuFallback;

  /** Vulkan settings at their defaults: the first device Cairn picks, no memory limit, no fallback. */
  public VulkanOptions() {}

  // Which fields were set (the others keep cairn_vulkan_options_init's values).
  long set() {
    return set;
  }

  /**
   * External mode: an engine's own VkInstance, VkPhysicalDevice, VkDevice and VkQueue (of
   * {@code queueFamily}) as native addresses (e.g. LWJGL's {@code address()}). Set all four or
   * none: the C API refuses a partial set. Cairn destroys none of them and runs only 32-bit dtypes
   * there; the engine must not use the queue from another thread while Cairn records work on it.
   *
   * @param instance the external VkInstance, as an address
   * @param physicalDevice the external VkPhysicalDevice, as an address
   * @param device the external VkDevice, as an address
   * @param queueFamily the queue family index on the external device
   * @param queue the external VkQueue, as an address
   * @return these options
   */
  public VulkanOptions external(long instance, long physicalDevice, long device, int queueFamily, long queue) {
    this.instance = instance;
    this.physicalDevice = physicalDevice;
    this.device = device;
    this.queueFamily = queueFamily;
    this.queue = queue;
    set |= CairnNative.VULKAN_OPTIONS_INSTANCE | CairnNative.VULKAN_OPTIONS_PHYSICAL_DEVICE
        | CairnNative.VULKAN_OPTIONS_DEVICE | CairnNative.VULKAN_OPTIONS_QUEUE_FAMILY | CairnNative.VULKAN_OPTIONS_QUEUE;
    return this;
  }

  /**
   * Bytes each Vulkan device of the context may hold; 0 (default) = no limit. Past it: RESOURCE_EXHAUSTED.
   *
   * @param bytes the limit in bytes (0: none)
   * @return these options
   */
  public VulkanOptions memoryLimit(long bytes) {
    if (bytes < 0) throw new IllegalArgumentException("memoryLimit must be >= 0, got " + bytes);
    this.memoryLimit = bytes;
    set |= CairnNative.VULKAN_OPTIONS_MEMORY_LIMIT;
    return this;
  }

  /**
   * Ops without a Vulkan kernel for their dtype run on the CPU (counted, see {@link
   * Vulkan#fallbackCount}) instead of failing with UNIMPLEMENTED. Default false.
   *
   * @param on whether to fall back to the CPU
   * @return these options
   */
  public VulkanOptions cpuFallback(boolean on) {
    this.cpuFallback = on;
    set |= CairnNative.VULKAN_OPTIONS_CPU_FALLBACK;
    return this;
  }

  /**
   * The setting of {@link #external}.
   *
   * @return the external VkInstance (0: none)
   */
  public long instance() {
    return instance;
  }

  /**
   * The setting of {@link #external}.
   *
   * @return the external VkPhysicalDevice (0: none)
   */
  public long physicalDevice() {
    return physicalDevice;
  }

  /**
   * The setting of {@link #external}.
   *
   * @return the external VkDevice (0: none)
   */
  public long device() {
    return device;
  }

  /**
   * The setting of {@link #external}.
   *
   * @return the queue family index of the external queue
   */
  public int queueFamily() {
    return queueFamily;
  }

  /**
   * The setting of {@link #external}.
   *
   * @return the external VkQueue (0: none)
   */
  public long queue() {
    return queue;
  }

  /**
   * The setting of {@link #memoryLimit(long)}.
   *
   * @return the memory limit in bytes (0: none)
   */
  public long memoryLimit() {
    return memoryLimit;
  }

  /**
   * The setting of {@link #cpuFallback(boolean)}.
   *
   * @return whether ops without a Vulkan kernel run on the CPU
   */
  public boolean cpuFallback() {
    return cpuFallback;
  }
}
