package org.spatialingest.geometry;

import java.io.Serializable;

/**
 * A boundary refresh: the new polygon of a named reference region, as 2D WKB (CRS84), with the
 * event time of the record that carried it (an older refresh never replaces a newer one). A Flink
 * POJO.
 */
public class RegionRefresh implements Serializable {
  public String name;
  public byte[] wkb;
  public long eventMillis;

  public RegionRefresh() {}

  public RegionRefresh(String name, byte[] wkb, long eventMillis) {
    this.name = name;
    this.wkb = wkb;
    this.eventMillis = eventMillis;
  }
}
