package dev.cairn;

import java.lang.ref.Reference;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * An iterator running a {@link Dataset} (cairn_dataset_iterate): a tracked object of kind
 * ITERATOR, so it can be a checkpoint's child beside the model and the optimizer ({@code
 * ckpt.root().set("data", it)}, or {@code Checkpoint.create(ctx, Map.of("model", m, "data", it))})
 * and saves and restores with them; after a restore the elements continue exactly as an
 * uninterrupted run's would.
 *
 * <p>{@link #getNext()} returns the next element, or null at the end of data (and again on every
 * later call); an element that failed (a callback threw, a CSV field did not parse) throws a
 * {@link CairnException} naming the transformation and the element, and the next call continues
 * after it. As an {@link Iterable} (and through {@link #stream()}) the end of data ends the loop,
 * and a failed element throws from {@code next()}; the elements are the caller's to close. Several
 * threads may call {@link #getNext()} at once (each element goes to one of them); a
 * {@code java.util.Iterator} view is not thread-safe.
 *
 * <p>{@link #close()} drops this handle's reference (the iterator's threads stop when the last
 * reference, handle or checkpoint edge, goes); {@link #stop()} stops them at once.
 */
public final class DatasetIterator extends CairnObject implements Iterable<Element> {
  private volatile List<String> names; // the dataset's component names, read once

  DatasetIterator(long handle) {
    super(handle);
  }

  /**
   * The component names of the elements.
   *
   * @return the names (unmodifiable)
   */
  public List<String> names() {
    List<String> n = names;
    if (n == null) {
      try (Dataset d = dataset()) {
        n = d.names();
      }
      names = n;
    }
    return n;
  }

  /**
   * The dataset this iterator runs (a new handle, which the caller closes).
   *
   * @return the dataset
   */
  public Dataset dataset() {
    long h = handle();
    try {
      return new Dataset(CairnNative.iteratorDataset(h));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The next element, or null at the end of data.
   *
   * @return the element (the caller closes it), or null at the end
   * @throws CairnException for an element that failed (it is skipped; call again for the next);
   *     FAILED_PRECONDITION after {@link #stop()}
   */
  public Element getNext() {
    List<String> n = names();
    long[] out = new long[n.size()];
    long h = handle();
    try {
      return DataNative.iteratorNext(h, out) ? Element.wrap(n, out) : null;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Elements delivered since the start (restored with the state).
   *
   * @return the position
   */
  public long position() {
    long h = handle();
    try {
      return CairnNative.iteratorPosition(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The iterator's state, what a checkpoint stores: a few integers for pipelines over indexable
   * sources, more where a stream must be buffered.
   *
   * @return the state's bytes
   */
  public byte[] save() {
    long h = handle();
    try {
      return DataNative.iteratorSave(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Continues from a saved state (of an iterator over the same pipeline): the next element is the
   * one the saved iterator would have returned next. INVALID_ARGUMENT naming both pipelines for
   * another pipeline's state; DATA_LOSS for corrupt bytes.
   *
   * @param state bytes from {@link #save()}
   */
  public void restore(byte[] state) {
    java.util.Objects.requireNonNull(state, "state");
    long h = handle();
    try {
      CairnNative.iteratorRestore(h, state);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Stops the iterator's background threads and waits for them (cairn_iterator_close); later
   * {@link #getNext()} calls throw FAILED_PRECONDITION. Calling it again does nothing. The handle
   * stays open until {@link #close()}.
   */
  public void stop() {
    long h = handle();
    try {
      CairnNative.iteratorClose(h);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * A one-pass view: {@code hasNext()} is false at the end of data; {@code next()} throws the
   * CairnException of an element that failed (and the view then continues after it).
   *
   * @return the view
   */
  @Override
  public Iterator<Element> iterator() {
    return new Iterator<Element>() {
      private Element ahead;
      private RuntimeException failed;
      private boolean end;

      @Override
      public boolean hasNext() {
        if (ahead != null || failed != null) return true;
        if (end) return false;
        try {
          ahead = getNext();
        } catch (CairnException e) {
          failed = e;
          return true;
        }
        end = ahead == null;
        return !end;
      }

      @Override
      public Element next() {
        if (!hasNext()) throw new NoSuchElementException("end of data");
        if (failed != null) {
          RuntimeException e = failed;
          failed = null;
          throw e;
        }
        Element e = ahead;
        ahead = null;
        return e;
      }
    };
  }

  /**
   * The remaining elements as a sequential, ordered stream (see {@link #iterator()}); the stream
   * does not close the iterator, and the elements are the caller's to close.
   *
   * @return the stream
   */
  public Stream<Element> stream() {
    return StreamSupport.stream(
        Spliterators.spliteratorUnknownSize(iterator(), Spliterator.ORDERED | Spliterator.NONNULL), false);
  }

  @Override
  public String toString() {
    return isClosed() ? "DatasetIterator(closed)" : "DatasetIterator(position " + position() + ")";
  }
}
