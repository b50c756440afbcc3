import dev.cairn.CairnContext;
import dev.cairn.Checkpoint;
import dev.cairn.CheckpointManager;
import dev.cairn.CheckpointReader;
import dev.cairn.Module;
import dev.cairn.RestoreStatus;
import dev.cairn.Tensor;
import dev.cairn.Variable;
import java.util.Arrays;

/**
 * Saves a module's variable with a checkpoint manager, restoring the latest checkpoint first, and
 * lists what was saved. Run it twice on one directory: the second run starts from the first's value.
 * Run: java -cp target/classes example/CheckpointExample.java DIRECTORY
 */
public class CheckpointExample {
  public static void main(String[] args) {
    String dir = args.length > 0 ? args[0] : "/tmp/cairn-checkpoint-example";
    try (CairnContext ctx = new CairnContext();
        Module net = Module.create(ctx, "net");
        Tensor init = Tensor.of(ctx, new float[] {1, 2, 3}, 3);
        Variable w = Variable.create(ctx, init, Variable.options().name("w").scope(net))) {
      net.set("w", w); // a tracked edge
      try (Checkpoint ckpt = Checkpoint.create(ctx, "model", net);
          CheckpointManager manager =
              CheckpointManager.create(ckpt, dir, CheckpointManager.options().maxToKeep(3))) {
        try (RestoreStatus status = ckpt.restore(manager.latest())) { // null: nothing to restore
          if (manager.latest() != null) status.assertConsumed();
        }
        try (Tensor one = Tensor.of(ctx, new float[] {1, 1, 1}, 3)) {
          w.assignAdd(one);
        }
        String path = manager.save(); // DIRECTORY/ckpt-1, ckpt-2, ...
        try (Tensor value = w.read()) {
          System.out.println(w.name() + " = " + Arrays.toString(value.toFloatArray()) + " saved to "
              + path.substring(path.lastIndexOf('/') + 1));
        }
        try (CheckpointReader reader = CheckpointReader.open(path)) {
          reader.entries().forEach(System.out::println);
        }
      }
    }
  }
}
