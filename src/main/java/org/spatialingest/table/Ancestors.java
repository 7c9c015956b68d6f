package org.spatialingest.table;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The history of a snapshot, newest first, that tells after the walk how it ended: at the table's
 * first snapshot (no parent), or at a parent that is gone (expired).
 */
final class Ancestors implements Iterable<Snapshot> {
  private final Table table;
  private final Snapshot start;
  private boolean endedInExpired;

  private Ancestors(Table table, Snapshot start) {
    this.table = table;
    this.start = start;
  }

  static Ancestors of(Table table, Snapshot start) {
    return new Ancestors(table, start);
  }

  /** After a full walk: whether it ended at a parent that is no longer in the table. */
  boolean endedInExpired() {
    return endedInExpired;
  }

  @Override
  public Iterator<Snapshot> iterator() {
    return new Iterator<>() {
      private Snapshot next = start;

      @Override
      public boolean hasNext() {
        return next != null;
      }

      @Override
      public Snapshot next() {
        if (next == null) {
          throw new NoSuchElementException();
        }
        Snapshot s = next;
        Long parent = s.parentId();
        next = parent == null ? null : table.snapshot(parent);
        if (parent != null && next == null) {
          endedInExpired = true;
        }
        return s;
      }
    };
  }
}
