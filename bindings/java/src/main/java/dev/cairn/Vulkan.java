package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The Vulkan backend: availability, the device list, the CPU fallback counter and
 * synchronization. A context reaches Vulkan through {@code CairnContext.options().device("vulkan")}
 * or, with Vulkan settings, {@link CairnContext#CairnContext(CairnContext.Options, VulkanOptions)}
 * ("vulkan" picks the first discrete GPU, then integrated, virtual, then a CPU implementation such
 * as lavapipe; "vulkan:N" is {@link #devices()}' entry N).
 */
public final class Vulkan {
  private Vulkan() {}

  /**
   * Whether a Vulkan loader and driver report at least one device. Throws only when Cairn's own
   * native library could not be loaded.
   *
   * @return whether Vulkan is usable
   */
  public static boolean available() {
    NativeLibrary.check();
    return CairnNative.vulkanAvailable() == 1;
  }

  /**
   * The number of Vulkan devices. Throws {@link CairnException} UNAVAILABLE without a driver.
   *
   * @return the number of Vulkan devices
   */
  public static int deviceCount() {
    NativeLibrary.check();
    return Math.toIntExact(CairnNative.vulkanDeviceCount());
  }

  /**
   * Describes device {@code index}: OUT_OF_RANGE past the last device, UNAVAILABLE without a
   * driver, IllegalArgumentException for a negative index.
   *
   * @param index the zero-based index
   * @return the device's description
   */
  public static VulkanDevice device(int index) {
    NativeLibrary.check();
    VulkanDeviceInfo i = CairnNative.vulkanDeviceDescribe(index);
    return new VulkanDevice(index, i.name == null ? "" : i.name, VulkanDeviceType.fromValue(i.type), i.apiVersion,
        i.deviceLocalMemory, i.totalMemory, i.subgroupSize, i.subgroupArithmetic != 0, i.float16 != 0,
        i.maxStorageBufferRange, i.maxSharedMemory);
  }

  /**
   * Every Vulkan device in index order; UNAVAILABLE without a driver (check {@link #available()}).
   *
   * @return every Vulkan device in index order; UNAVAILABLE without a driver (check {@link #available()})
   */
  public static List<VulkanDevice> devices() {
    int n = deviceCount();
    List<VulkanDevice> out = new ArrayList<>(n);
    for (int i = 0; i < n; ++i) out.add(device(i));
    return Collections.unmodifiableList(out);
  }

  /**
   * How many op calls on {@code ctx}'s Vulkan device {@code device} (null: the default device)
   * ran on the CPU through {@link VulkanOptions#cpuFallback}. INVALID_ARGUMENT for a device that
   * is not a Vulkan device, NOT_FOUND for an unknown one.
   *
   * @param ctx the context
   * @param device the device name ("cpu", "vulkan", "vulkan:N"; null: the default device)
   * @return the number of op calls that fell back to the CPU
   */
  public static long fallbackCount(CairnContext ctx, String device) {
    if (ctx == null) throw new NullPointerException("ctx");
    try {
      return CairnNative.vulkanFallbackCount(ctx.handle(), NativeResources.cstr(device));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * Waits until the work queued on every device of {@code ctx} has finished. Vulkan records eager
   * ops and submits them in batches; reading a tensor waits by itself, so this is for timing and
   * for handing results to an engine sharing the device.
   *
   * @param ctx the context
   */
  public static void synchronize(CairnContext ctx) {
    if (ctx == null) throw new NullPointerException("ctx");
    try {
      CairnNative.contextSynchronize(ctx.handle());
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }
}
