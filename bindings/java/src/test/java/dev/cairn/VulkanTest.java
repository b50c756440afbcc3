package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Vulkan section on lavapipe (Mesa's CPU Vulkan driver, installed on the test machines): the
 * device list, Vulkan contexts, the memory limit, the CPU fallback and its counter, and a small
 * network giving the same numbers on "cpu" and "vulkan".
 */
class VulkanTest {
  private static CairnContext on(String device) {
    return new CairnContext(CairnContext.options().device(device));
  }

  @Test
  void devicesAreListed() {
    assertTrue(Vulkan.available(), "lavapipe should be installed");
    List<VulkanDevice> devices = Vulkan.devices();
    assertFalse(devices.isEmpty());
    assertEquals(Vulkan.deviceCount(), devices.size());
    for (int i = 0; i < devices.size(); ++i) {
      VulkanDevice d = devices.get(i);
      assertEquals("vulkan:" + i, d.deviceName());
      assertFalse(d.name().isEmpty(), "device " + i + " has no name");
      assertTrue(d.totalMemory() > 0 && d.deviceLocalMemory() <= d.totalMemory(), d.toString());
      assertTrue(d.subgroupSize() >= 1 && d.maxStorageBufferRange() >= (1 << 20) && d.maxSharedMemory() >= 16384,
          d.toString());
      assertTrue(d.apiVersionString().startsWith("1."), d.apiVersionString());
      assertTrue(((d.apiVersion() >>> 12) & 0x3ff) >= 1, d.apiVersionString());
    }
    assertEquals(VulkanDeviceType.CPU, devices.get(0).type(), "lavapipe is a CPU device");
  }

  @Test
  void aBadDeviceIndexIsAnError() {
    int n = Vulkan.deviceCount();
    CairnException e = assertThrows(CairnException.class, () -> Vulkan.device(n));
    assertEquals(Code.OUT_OF_RANGE, e.code());
    assertTrue(e.getMessage().contains("Vulkan device(s)"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Vulkan.device(-1));
    e = assertThrows(CairnException.class, () -> on("vulkan:" + n));
    assertEquals(Code.NOT_FOUND, e.code());
  }

  @Test
  void fallbackCountAndSynchronize() {
    try (CairnContext ctx = on("vulkan")) {
      assertEquals("vulkan:0", ctx.device());
      assertEquals(0, Vulkan.fallbackCount(ctx, null));
      assertEquals(0, Vulkan.fallbackCount(ctx, "vulkan:0"));
      CairnException e = assertThrows(CairnException.class, () -> Vulkan.fallbackCount(ctx, "cpu"));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("not a Vulkan device"), e.getMessage());
      assertEquals(Code.NOT_FOUND,
          assertThrows(CairnException.class, () -> Vulkan.fallbackCount(ctx, "vulkan:9")).code());
      Vulkan.synchronize(ctx);
      // Without the fallback, float64 (no Vulkan kernels) is refused with a clear error.
      try (Tensor x = Tensor.of(ctx, new double[] {1.5, -2.5}, 2)) {
        e = assertThrows(CairnException.class, () -> Ops.neg(ctx, x));
        assertEquals(Code.UNIMPLEMENTED, e.code());
        assertTrue(e.getMessage().contains("Neg: no Vulkan kernel for dtype float64"), e.getMessage());
      }
    }
  }

  private static CairnContext withVulkan(VulkanOptions vk) {
    return new CairnContext(CairnContext.options(), vk);
  }

  @Test
  void memoryLimitGivesResourceExhausted() {
    try (CairnContext ctx = withVulkan(new VulkanOptions().memoryLimit(2 << 20))) { // 2 MiB
      assertEquals("vulkan:0", ctx.device(), "Vulkan settings make \"vulkan\" the default device");
      float[] big = new float[300_000]; // 1.2 MB each
      try (Tensor a = Tensor.of(ctx, big, big.length)) {
        assertEquals("vulkan:0", a.device());
        CairnException e = assertThrows(CairnException.class, () -> Tensor.of(ctx, big, big.length));
        assertEquals(Code.RESOURCE_EXHAUSTED, e.code());
        assertTrue(e.getMessage().contains("memory limit"), e.getMessage());
      }
      // The first one is freed, so another fits.
      Tensor.of(ctx, big, big.length).close();
    }
    assertThrows(IllegalArgumentException.class, () -> new VulkanOptions().memoryLimit(-1));
  }

  @Test
  void cpuFallbackIsCounted() {
    try (CairnContext ctx = withVulkan(new VulkanOptions().cpuFallback(true));
         Tensor x = Tensor.of(ctx, new double[] {1.5, -2.5}, 2);
         Tensor y = Ops.neg(ctx, x)) {
      assertEquals("vulkan:0", y.device());
      assertArrayEquals(new double[] {-1.5, 2.5}, y.toDoubleArray());
      assertEquals(1, Vulkan.fallbackCount(ctx, null));
    }
  }

  @Test
  void contextOptionsReachTheVulkanConstructor() {
    // Device "cpu" keeps the CPU as default; the Vulkan settings still apply to "vulkan:0".
    List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (CairnContext ctx = new CairnContext(
             CairnContext.options().device("cpu").logLevel(LogLevel.INFO).logHandler((l, m) -> logged.add(m)),
             new VulkanOptions().cpuFallback(true))) {
      assertEquals("cpu", ctx.device());
      assertEquals(0, Vulkan.fallbackCount(ctx, "vulkan:0"));
    }
    assertTrue(logged.stream().anyMatch(m -> m.contains("context created: default device cpu")), logged.toString());
    // Null Vulkan settings are the plain constructor.
    try (CairnContext ctx = new CairnContext(CairnContext.options(), null)) {
      assertEquals("cpu", ctx.device());
    }
  }

  @Test
  void partialExternalHandlesAreRefused() {
    CairnException e = assertThrows(CairnException.class,
        () -> withVulkan(new VulkanOptions().external(0, 0, 1, 0, 0)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("1 of 4 set"), e.getMessage());
  }

  /** Two dense layers, a softmax and a mean-squared loss; returns the 12 probabilities and the loss. */
  private static float[] smallNetwork(CairnContext ctx) {
    try (Tensor x = Tensor.of(ctx, new float[] {0.1f, -0.2f, 0.3f, 0.5f, -1.0f, 1.2f, 0.7f, -0.3f, 0.2f, 0.0f,
             -0.4f, 0.9f, 0.8f, -0.6f, 0.25f, 0.05f, 0.3f, -0.9f, 1.1f, -0.2f}, 4, 5);
         Tensor w1 = Tensor.of(ctx, new float[] {0.2f, -0.1f, 0.4f, 0.3f, -0.5f, 0.1f, 0.7f, 0.2f, -0.3f, 0.05f,
             0.6f, -0.4f, -0.2f, 0.3f, 0.1f, 0.8f, -0.6f, 0.25f, 0.15f, -0.7f, 0.45f, -0.1f, 0.3f, 0.2f, 0.5f,
             0.35f, -0.25f, 0.1f, 0.9f, -0.3f}, 5, 6);
         Tensor b1 = Tensor.of(ctx, new float[] {0.01f, -0.02f, 0.03f, 0.0f, 0.05f, -0.01f}, 6);
         Tensor w2 = Tensor.of(ctx, new float[] {0.3f, -0.2f, 0.1f, 0.5f, 0.4f, -0.6f, -0.1f, 0.2f, 0.7f, 0.25f,
             -0.35f, 0.15f, 0.6f, 0.1f, -0.2f, -0.4f, 0.3f, 0.05f}, 6, 3);
         Tensor target = Tensor.of(ctx, new float[] {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0}, 4, 3);
         Tensor h = Ops.matMul(ctx, x, w1);
         Tensor hb = Ops.add(ctx, h, b1);
         Tensor hr = Ops.relu(ctx, hb);
         Tensor logits = Ops.matMul(ctx, hr, w2);
         Tensor p = Ops.softmax(ctx, logits);
         Tensor d = Ops.sub(ctx, p, target);
         Tensor sq = Ops.square(ctx, d);
         Tensor loss = Ops.mean(ctx, sq)) {
      assertEquals(ctx.device(), p.device());
      assertEquals(ctx.device(), loss.device());
      Vulkan.synchronize(ctx);
      float[] out = new float[13];
      System.arraycopy(p.toFloatArray(), 0, out, 0, 12);
      out[12] = loss.toFloatArray()[0];
      return out;
    }
  }

  @Test
  void sameNumbersOnCpuAndVulkan() {
    float[] cpu;
    float[] vk;
    try (CairnContext c = on("cpu")) {
      cpu = smallNetwork(c);
    }
    try (CairnContext c = on("vulkan")) {
      vk = smallNetwork(c);
      assertEquals(0, Vulkan.fallbackCount(c, null));
    }
    for (int i = 0; i < 12; ++i) {
      assertEquals(cpu[i], vk[i], 1e-5f * (1 + Math.abs(cpu[i])), "probability " + i);
    }
    for (int row = 0; row < 4; ++row) {
      assertEquals(1.0f, vk[3 * row] + vk[3 * row + 1] + vk[3 * row + 2], 1e-5f, "softmax row " + row);
    }
    assertTrue(cpu[12] > 0);
    assertEquals(cpu[12], vk[12], 1e-6f, "loss");
  }
}
