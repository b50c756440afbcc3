package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Keeps numbered checkpoints of one {@link Checkpoint} in a directory
 * (tf.train.CheckpointManager): "&lt;directory&gt;/&lt;checkpoint_name&gt;-&lt;N&gt;", at most
 * max_to_keep of them. It holds its own reference to the checkpoint. Use it from one thread at a
 * time, like its checkpoint. Closing it waits for a background save.
 */
public final class CheckpointManager extends NativeHandle {
  private CheckpointManager(long handle) {
    super(handle, CairnNative::checkpointManagerFree);
  }

  /**
   * A manager with the default options (name "ckpt", max_to_keep 5).
   *
   * @param checkpoint the checkpoint to manage
   * @param directory the directory holding the checkpoints
   * @return a manager with the default options (name "ckpt", max_to_keep 5)
   */
  public static CheckpointManager create(Checkpoint checkpoint, String directory) {
    return create(checkpoint, directory, null);
  }

  /**
   * A manager saving {@code checkpoint} into {@code directory} (created if missing). It reads the
   * directory's state, or rebuilds it by scanning for intact checkpoints, and removes what an
   * interrupted save left behind. INVALID_ARGUMENT for max_to_keep 0.
   *
   * @param checkpoint the checkpoint to manage
   * @param directory the directory holding the checkpoints
   * @param options the options (null: every default)
   * @return the new checkpoint manager, which the caller closes
   */
  public static CheckpointManager create(Checkpoint checkpoint, String directory, Options options) {
    Objects.requireNonNull(checkpoint, "checkpoint");
    if (options == null) options = new Options();
    byte[] dir = NativeResources.cstr(directory);
    byte[] name = NativeResources.cstr(options.checkpointName);
    long c = checkpoint.handle();
    try {
      return new CheckpointManager(
          CairnNative.checkpointManagerCreate(c, dir, options.set, name, options.maxToKeep, options.keepCheckpointEveryNHours));
    } finally {
      Reference.reachabilityFence(checkpoint);
    }
  }

  /**
   * Options for a new manager; each starts at its default.
   *
   * @return new options, each at its default
   */
  public static Options options() {
    return new Options();
  }

  /** cairn_checkpoint_manager_options. Not thread-safe to mutate. */
  public static final class Options {
    private long set; // CairnNative.CHECKPOINT_MANAGER_OPTIONS_* of the fields set
    private String checkpointName;
    private long maxToKeep;
    private double keepCheckpointEveryNHours;

    /** Options at their defaults (the same as {@code options()}). */
    public Options() {}

    /**
     * The file name prefix; null (default) means "ckpt".
     *
     * @param checkpointName the file name prefix of the checkpoints
     * @return these options
     */
    public Options checkpointName(String checkpointName) {
      this.checkpointName = checkpointName;
      set |= CairnNative.CHECKPOINT_MANAGER_OPTIONS_CHECKPOINT_NAME;
      return this;
    }

    /**
     * How many checkpoints to keep; -1 keeps all; default 5; 0 is an error.
     *
     * @param maxToKeep how many checkpoints to keep (-1: all)
     * @return these options
     */
    public Options maxToKeep(long maxToKeep) {
      this.maxToKeep = maxToKeep;
      set |= CairnNative.CHECKPOINT_MANAGER_OPTIONS_MAX_TO_KEEP;
      return this;
    }

    /**
     * Also keep one checkpoint per this many hours; 0 (default) turns it off.
     *
     * @param hours the interval in hours (0: off)
     * @return these options
     */
    public Options keepCheckpointEveryNHours(double hours) {
      this.keepCheckpointEveryNHours = hours;
      set |= CairnNative.CHECKPOINT_MANAGER_OPTIONS_KEEP_CHECKPOINT_EVERY_N_HOURS;
      return this;
    }
  }

  /**
   * Shards every later save across the processes of {@code mpi} (null: one file per save again).
   * Every rank then calls {@link #save()} (or {@link #save(long)} with the same number), each on
   * its own manager over the same directory, which every rank must see (one machine's disk, or a
   * shared filesystem). Each rank writes its share of the values as a shard file beside the
   * checkpoint, and rank 0 commits the index at the checkpoint's path once every shard is durable:
   * a failure or crash of any rank before that leaves the previous checkpoints listed and intact.
   * Sharded saves are synchronous. The index is the checkpoint: {@link Checkpoint#restore} takes
   * its path in any number of processes, with or without MPI. The manager holds the communicator
   * until it is closed or sharded anew.
   *
   * @param mpi this process's communicator, or null
   */
  public void shard(Mpi mpi) {
    long h = handle();
    long m = mpi == null ? 0 : mpi.handle();
    try {
      CairnNative.checkpointManagerShard(h, m);
    } finally {
      Reference.reachabilityFence(this);
      Reference.reachabilityFence(mpi);
    }
  }

  /**
   * Saves checkpoint number save_counter + 1 (incrementing it) and returns its path.
   *
   * @return the path written
   */
  public String save() {
    return saveRaw(-1);
  }

  /**
   * Saves checkpoint number {@code checkpointNumber} (>= 0) and returns its path.
   *
   * @param checkpointNumber the number the checkpoint's path ends in
   * @return the path written
   */
  public String save(long checkpointNumber) {
    if (checkpointNumber < 0) throw new IllegalArgumentException("checkpointNumber must be >= 0, got " + checkpointNumber);
    return saveRaw(checkpointNumber);
  }

  private String saveRaw(long number) {
    long h = handle();
    try {
      return CairnNative.checkpointManagerSave(h, number);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The newest checkpoint's path, or null when there is none.
   *
   * @return the newest checkpoint's path, or null when there is none
   */
  public String latest() {
    long h = handle();
    try {
      return CairnNative.checkpointManagerLatest(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The paths of the checkpoints kept, oldest first.
   *
   * @return the paths of the checkpoints kept, oldest first
   */
  public List<String> checkpoints() {
    long h = handle();
    try {
      long n = CairnNative.checkpointManagerCount(h);
      List<String> out = new ArrayList<>((int) n);
      for (long i = 0; i < n; ++i) out.add(CairnNative.checkpointManagerPath(h, i));
      return Collections.unmodifiableList(out);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
