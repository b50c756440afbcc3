package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Device configuration (tf.config) from Java: physical devices and heaps, a CPU split into two
 * logical devices with a memory limit, memory counts and the limit refusing an allocation,
 * configuration closed after the first tensor, and the errors of bad input.
 */
class DeviceConfigTest {
  private static CairnException expect(Code code, String fragment, Runnable call) {
    CairnException e = assertThrows(CairnException.class, call::run);
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(fragment), e.getMessage() + " does not contain " + fragment);
    return e;
  }

  @Test
  void physicalDevicesAreListed() {
    try (CairnContext ctx = new CairnContext()) {
      DeviceConfig devices = ctx.devices();
      List<DeviceConfig.PhysicalDevice> physical = devices.physicalDevices();
      DeviceConfig.PhysicalDevice cpu = physical.get(0);
      assertEquals(List.of("cpu:0", "CPU", "cpu"), List.of(cpu.name(), cpu.type(), cpu.deviceType()));
      assertTrue(cpu.memory() > 0 && cpu.queues() == 1 && !cpu.description().isEmpty(), cpu.toString());
      assertEquals(List.of(new DeviceConfig.Heap(cpu.memory(), cpu.memory(), 0, true)), cpu.heaps());
      // A Vulkan device appears where a driver is installed (lavapipe on the test machines); none is required.
      for (DeviceConfig.PhysicalDevice d : physical.subList(1, physical.size())) {
        assertTrue(d.type().equals("VULKAN") && d.name().startsWith("vulkan:") && d.queues() >= 1
            && !d.heaps().isEmpty(), d.toString());
        for (DeviceConfig.Heap h : d.heaps()) {
          assertTrue(h.size() > 0 && h.budget() <= h.size() && h.usage() <= h.budget(), d.name() + ": " + h);
        }
      }
      List<String> names = new ArrayList<>();
      for (DeviceConfig.PhysicalDevice d : physical) names.add(d.name());
      assertEquals(names, devices.visibleDevices());
      assertTrue(devices.memoryGrowth("cpu:0"));
      // Listing physical devices does not initialize the logical ones.
      assertFalse(devices.initialized());
    }
  }

  @Test
  void splitCpuCountsMemoryAndEnforcesTheLimit() {
    try (CairnContext ctx = new CairnContext()) {
      DeviceConfig devices = ctx.devices();
      devices.setLogicalDevices("cpu:0", 0, 4096);
      expect(Code.FAILED_PRECONDITION, "already configured as 2 logical device(s)",
          () -> devices.setLogicalDevices("cpu:0", 0, 0));
      List<DeviceConfig.LogicalDevice> logical = devices.logicalDevices(); // initializes
      assertTrue(logical.size() >= 2 && logical.get(0).name().equals("cpu:0"), logical.toString());
      assertEquals(new DeviceConfig.LogicalDevice("cpu:1", "cpu:0", 4096), logical.get(1));
      assertTrue(devices.initialized());

      try (Tensor a = Tensor.of(ctx, new float[256], 256); Tensor b = a.copyTo(ctx, "cpu:1")) { // 1 KiB
        assertEquals("cpu:0", a.device());
        assertEquals("cpu:1", b.device());
        DeviceConfig.MemoryStats m = devices.memoryInfo("cpu:1");
        assertTrue(m.current() == 1024 && m.peak() == 1024 && m.limit() == 4096 && m.budget() > 0, m.toString());
        // Three more KiB fit under the 4 KiB limit; a fifth is refused.
        List<Tensor> sums = new ArrayList<>();
        try {
          for (int i = 0; i < 3; ++i) {
            sums.add(Ops.add(ctx, b, b));
            assertEquals("cpu:1", sums.get(i).device());
          }
          expect(Code.RESOURCE_EXHAUSTED, "cpu:1: allocating 1024 bytes would pass the device's memory limit of 4096",
              () -> Ops.add(ctx, b, b).close());
        } finally {
          for (Tensor s : sums) s.close();
        }
        m = devices.memoryInfo("cpu:1");
        assertEquals(List.of(1024L, 4096L), List.of(m.current(), m.peak()));
        devices.resetMemoryStats("cpu:1");
        assertEquals(1024, devices.memoryInfo("cpu:1").peak());
      }
      expect(Code.NOT_FOUND, "cpu:0, cpu:1", () -> devices.memoryInfo("cpu:2"));
      expect(Code.NOT_FOUND, "tpu", () -> devices.resetMemoryStats("tpu"));
    }
  }

  @Test
  void configurationIsClosedAfterTheFirstTensor() {
    try (CairnContext ctx = new CairnContext()) {
      DeviceConfig devices = ctx.devices();
      devices.setThreads(1, 3);
      assertEquals(new DeviceConfig.Threads(1, 3), devices.threads());
      devices.setVisibleDevices(); // the CPU only
      assertEquals(List.of("cpu:0"), devices.visibleDevices());
      try (Tensor t = Tensor.of(ctx, new float[] {1}, 1)) {
        assertEquals("cpu", t.device());
        assertTrue(devices.initialized());
      }
      expect(Code.FAILED_PRECONDITION, "cannot be modified after", () -> devices.setLogicalDevices("cpu:0", 0));
      expect(Code.FAILED_PRECONDITION, "already initialized", () -> devices.setVisibleDevices());
      expect(Code.FAILED_PRECONDITION, "cairn_context_set_threads", () -> devices.setThreads(2, 2));
      List<DeviceConfig.LogicalDevice> logical = devices.logicalDevices();
      assertEquals(1, logical.size(), "Vulkan is hidden: " + logical);
      assertEquals("cpu", logical.get(0).name());
    }
  }

  @Test
  void badConfigurationIsRefused() {
    DeviceConfig devices;
    try (CairnContext ctx = new CairnContext()) {
      devices = ctx.devices();
      expect(Code.INVALID_ARGUMENT, "is more than", () -> devices.setLogicalDevices("cpu:0", 1L << 62));
      expect(Code.INVALID_ARGUMENT, "give 1 to 64", () -> devices.setLogicalDevices("cpu:0"));
      expect(Code.NOT_FOUND, "gpu:0", () -> devices.setLogicalDevices("gpu:0", 0));
      expect(Code.NOT_FOUND, "npu:0", () -> devices.setVisibleDevices("cpu:0", "npu:0"));
      expect(Code.INVALID_ARGUMENT, "applies to Vulkan devices", () -> devices.setMemoryGrowth("cpu:0", false));
      expect(Code.INVALID_ARGUMENT, "thread counts", () -> devices.setThreads(-2, 0));
      assertThrows(NullPointerException.class, () -> devices.memoryInfo(null));
      assertThrows(NullPointerException.class, () -> devices.setVisibleDevices("cpu:0", null));
      // None of these initialized the devices.
      assertFalse(devices.initialized());
    }
    // A view of a closed context fails as the context does.
    expect(Code.FAILED_PRECONDITION, "closed", devices::physicalDevices);
  }

  /**
   * Splitting a Vulkan device where one is installed (lavapipe on the test machines; skipped
   * without one): two logical devices with their own limits, a tensor copied between them and
   * counted on each, and memory growth read back.
   */
  @Test
  void splitVulkanWherePresent() {
    try (CairnContext ctx = new CairnContext()) {
      DeviceConfig devices = ctx.devices();
      Assumptions.assumeTrue(devices.physicalDevices().size() >= 2, "no Vulkan device");
      devices.setVisibleDevices("vulkan:0");
      devices.setMemoryGrowth("vulkan:0", true);
      devices.setLogicalDevices("vulkan:0", 1 << 20, 2 << 20);
      assertTrue(devices.memoryGrowth("vulkan:0"));
      assertEquals(List.of(new DeviceConfig.LogicalDevice("cpu", "cpu:0", 0),
              new DeviceConfig.LogicalDevice("vulkan:0", "vulkan:0", 1 << 20),
              new DeviceConfig.LogicalDevice("vulkan:1", "vulkan:0", 2 << 20)),
          devices.logicalDevices());
      try (Tensor x = Tensor.of(ctx, new float[256], 256);
          Tensor on0 = x.copyTo(ctx, "vulkan:0");
          Tensor on1 = on0.copyTo(ctx, "vulkan:1")) {
        assertEquals("vulkan:1", on1.device());
        assertEquals(1024, devices.memoryInfo("vulkan:0").current());
        assertEquals(new DeviceConfig.MemoryStats(1024, 1024, 2 << 20, devices.memoryInfo("vulkan:1").budget()),
            devices.memoryInfo("vulkan:1"));
        assertArrayEquals(new float[256], on1.toFloatArray());
      }
    }
  }
}
