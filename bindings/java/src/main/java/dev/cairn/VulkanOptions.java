package dev.cairn;

/**
 * The Vulkan settings of a context (cairn_vulkan_options); every field starts at the C default:
 * Cairn's own instance and device, no memory limit, no CPU fallback. Not thread-safe to mutate.
 */
public final class VulkanOptions {
  private long instance;
  private long physicalDevice;
  private long device;
  private int queueFamily;
  private long queue;
  private long memoryLimit;
  private boolean cpuFallback;

  public VulkanOptions() {}

  /**
   * External mode: an engine's own VkInstance, VkPhysicalDevice, VkDevice and VkQueue (of
   * {@code queueFamily}) as native addresses (e.g. LWJGL's {@code address()}). Set all four or
   * none: the C API refuses a partial set. Cairn destroys none of them and runs only 32-bit dtypes
   * there; the engine must not use the queue from another thread while Cairn records work on it.
   */
  public VulkanOptions external(long instance, long physicalDevice, long device, int queueFamily, long queue) {
    this.instance = instance;
    this.physicalDevice = physicalDevice;
    this.device = device;
    this.queueFamily = queueFamily;
    this.queue = queue;
    return this;
  }

  /** Bytes each Vulkan device of the context may hold; 0 (default) = no limit. Past it: RESOURCE_EXHAUSTED. */
  public VulkanOptions memoryLimit(long bytes) {
    if (bytes < 0) throw new IllegalArgumentException("memoryLimit must be >= 0, got " + bytes);
    this.memoryLimit = bytes;
    return this;
  }

  /**
   * Ops without a Vulkan kernel for their dtype run on the CPU (counted, see {@link
   * Vulkan#fallbackCount}) instead of failing with UNIMPLEMENTED. Default false.
   */
  public VulkanOptions cpuFallback(boolean on) {
    this.cpuFallback = on;
    return this;
  }

  public long instance() {
    return instance;
  }

  public long physicalDevice() {
    return physicalDevice;
  }

  public long device() {
    return device;
  }

  public int queueFamily() {
    return queueFamily;
  }

  public long queue() {
    return queue;
  }

  public long memoryLimit() {
    return memoryLimit;
  }

  public boolean cpuFallback() {
    return cpuFallback;
  }
}
