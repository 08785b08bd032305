package org.graphene.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.Test;

public class JobDagTest {
  private static JobDag.TaskIn t(String type, int priority) {
    return new JobDag.TaskIn(type, priority, 1, 1024, 1000);
  }

  private static Set<String> ids(List<JobDag.Task> ts) {
    Set<String> out = new HashSet<>();
    for (JobDag.Task x : ts) {
      out.add(x.id());
    }
    return out;
  }

  /** scan (2 tasks) -> agg (all-to-all, 2 tasks) -> out (one-to-one from agg). */
  private static JobDag chain() {
    return JobDag.parse(Arrays.asList(t("scan[0]", 1), t("scan[1]", 2), t("agg[0]<scan", 3),
        t("agg[1]<scan", 4), t("out[0]<~agg", 5), t("out[1]<~agg", 6)));
  }

  @Test
  public void rootsAreReadyFirstAndNumbersFollowTheTrace() {
    JobDag d = chain();
    assertEquals(6, d.size());
    assertEquals(new HashSet<>(Arrays.asList("scan[0]", "scan[1]")), ids(d.initiallyReady()));
    for (int i = 0; i < d.size(); i++) {
      assertEquals(i, d.tasks().get(i).number);
    }
    assertEquals(3, d.tasks().get(2).priority);
  }

  @Test
  public void allToAllWaitsForEveryParent() {
    JobDag d = chain();
    assertTrue("one of two parents done releases nothing", d.finish(0).isEmpty());
    assertEquals(new HashSet<>(Arrays.asList("agg[0]", "agg[1]")), ids(d.finish(1)));
  }

  @Test
  public void oneToOneReleasesOnlyTheMatchingTask() {
    JobDag d = chain();
    d.finish(0);
    d.finish(1);
    assertEquals(new HashSet<>(Arrays.asList("out[1]")), ids(d.finish(3)));
    assertEquals(new HashSet<>(Arrays.asList("out[0]")), ids(d.finish(2)));
    assertFalse(d.allFinished());
    d.finish(4);
    d.finish(5);
    assertTrue(d.allFinished());
  }

  @Test
  public void aDuplicateCompletionReleasesNothingTwice() {
    JobDag d = JobDag.parse(Arrays.asList(t("a[0]", 1), t("a[1]", 2), t("b[0]<a", 3)));
    d.finish(0);
    assertTrue(d.finish(0).isEmpty());
    assertEquals(1, d.finishedCount());
    assertEquals(1, d.finish(1).size());
  }

  @Test
  public void aTaskWithTwoParentStagesWaitsForBoth() {
    JobDag d = JobDag.parse(Arrays.asList(t("a[0]", 1), t("b[0]", 2), t("c[0]<a;b", 3)));
    assertTrue(d.finish(1).isEmpty());
    assertEquals(new HashSet<>(Arrays.asList("c[0]")), ids(d.finish(0)));
  }

  private static void refused(String why, String... types) {
    List<JobDag.TaskIn> in = new ArrayList<>();
    for (String s : types) {
      in.add(t(s, 1));
    }
    try {
      JobDag.parse(in);
      fail("accepted " + Arrays.toString(types));
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage() + " should mention " + why, e.getMessage().contains(why));
    }
  }

  @Test
  public void badJobsAreRefusedWithTheirReason() {
    refused("parent stage 'missing' is not in the job", "a[0]<missing");
    refused("is not stage[index]", "map");
    refused("appears twice", "a[0]", "a[0]");
    refused("indices run 0..1", "a[0]", "a[2]");
    refused("needs equal task counts", "a[0]", "a[1]", "b[0]<~a");
    refused("cycle", "a[0]<b", "b[0]<a");
    refused("own parent", "a[0]<a");
    refused("parents differ", "a[0]", "b[0]<a", "b[1]");
    refused("no container.type", "");
    refused("empty parent name", "a[0]", "b[0]<a;");
  }

  @Test
  public void emptyAndNonPositiveTasksAreRefused() {
    try {
      JobDag.parse(new ArrayList<>());
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage().contains("no tasks"));
    }
    try {
      JobDag.parse(Arrays.asList(new JobDag.TaskIn("a[0]", 1, 1, 1024, 0)));
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage().contains("must be positive"));
    }
  }
}
