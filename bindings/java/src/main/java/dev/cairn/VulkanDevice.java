package dev.cairn;

/**
 * One Vulkan physical device (cairn_vulkan_device_info). {@code index} N is the device named
 * "vulkan:N"; {@code type} is null for a type this binding does not know. {@code apiVersion} uses
 * the VK_MAKE_API_VERSION encoding; memory sizes and {@code maxStorageBufferRange} are bytes
 * (unsigned in C, but far below 2^63 on real devices).
 */
public record VulkanDevice(
    int index,
    String name,
    VulkanDeviceType type,
    int apiVersion,
    long deviceLocalMemory,
    long totalMemory,
    int subgroupSize,
    boolean subgroupArithmetic,
    boolean float16,
    long maxStorageBufferRange,
    int maxSharedMemory) {

  /**
   * The name contexts and tensors use for the device, "vulkan:N".
   *
   * @return the name contexts and tensors use for the device, "vulkan:N"
   */
  public String deviceName() {
    return "vulkan:" + index;
  }

  /**
   * The API version as "major.minor.patch".
   *
   * @return the API version as "major.minor.patch"
   */
  public String apiVersionString() {
    return ((apiVersion >>> 22) & 0x7f) + "." + ((apiVersion >>> 12) & 0x3ff) + "." + (apiVersion & 0xfff);
  }
}
