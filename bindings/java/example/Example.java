import dev.cairn.CairnContext;
import dev.cairn.Ops;
import dev.cairn.Tensor;
import java.util.Arrays;

/** Adds two tensors with Cairn. Run: java -cp cairn-1.3.0.jar example/Example.java (the jar carries its native code) */
public class Example {
  public static void main(String[] args) {
    try (CairnContext ctx = new CairnContext();
        Tensor a = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Tensor b = Tensor.of(ctx, new float[] {10, 20, 30}, 3);
        Tensor sum = Ops.add(ctx, a, b)) {
      System.out.println(sum + " " + Arrays.toString(sum.toFloatArray()));
    }
  }
}
