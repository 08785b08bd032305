package org.graphene.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.junit.After;
import org.junit.Test;

/**
 * The scheduler inside YARN's own ResourceManager (MockRM), with MockNM node heartbeats and
 * MockAM applications. Each test registers one node for the AMs, launches them there, then a
 * worker node whose heartbeat is where graphene's pick shows; each asserts what FifoScheduler
 * (whose queues and bookkeeping graphene reuses) would have done differently.
 */
public class GrapheneSchedulerTest {
  private MockRM rm;

  @After
  public void stop() {
    if (rm != null) {
      rm.stop();
    }
  }

  private GrapheneScheduler start(double kappa, double etaScale) throws Exception {
    return start(kappa, etaScale, "graphene");
  }

  private GrapheneScheduler start(double kappa, double etaScale, String policy) throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(GrapheneScheduler.POLICY, policy);
    conf.setClass(YarnConfiguration.RM_SCHEDULER, GrapheneScheduler.class, ResourceScheduler.class);
    conf.setDouble(GrapheneScheduler.KAPPA, kappa);
    conf.setDouble(GrapheneScheduler.ETA_SCALE, etaScale);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 256);
    rm = new MockRM(conf);
    rm.start();
    return (GrapheneScheduler) rm.getResourceScheduler();
  }

  /** Submits one application per queue name and launches its AM (1 GB) on {@code amNode}. */
  private List<MockAM> apps(MockNM amNode, String... queues) throws Exception {
    List<MockAM> out = new ArrayList<>();
    for (String q : queues) {
      RMApp app = MockRMAppSubmitter.submit(rm,
          MockRMAppSubmissionData.Builder.createWithMemory(1024, rm).withQueue(q).build());
      out.add(MockRM.launchAndRegisterAM(app, rm, amNode));
    }
    return out;
  }

  private static ResourceRequest ask(int priority, int mb, int vcores, int count) {
    return ResourceRequest.newInstance(Priority.newInstance(priority), ResourceRequest.ANY,
        Resource.newInstance(mb, vcores), count);
  }

  /** One worker heartbeat; then what each AM was given, by priority. */
  private List<List<Integer>> heartbeat(MockNM worker, List<MockAM> ams) throws Exception {
    worker.nodeHeartbeat(true);
    rm.drainEvents();
    List<List<Integer>> out = new ArrayList<>();
    for (MockAM am : ams) {
      List<Integer> got = new ArrayList<>();
      for (Container c : am.allocate(new ArrayList<>(), new ArrayList<>()).getAllocatedContainers()) {
        assertEquals(worker.getNodeId(), c.getNodeId());
        got.add(c.getPriority().getPriority());
      }
      out.add(got);
    }
    return out;
  }

  /**
   * Packing (eta 0, no fairness): the 4 GB request that fills the 4 GB worker goes before the
   * first-submitted application's 1 GB one (FifoScheduler serves the first application).
   */
  @Test
  public void packingPicksTheRequestThatFillsTheNode() throws Exception {
    GrapheneScheduler s = start(-1, 0);
    // The worker registers first (it heartbeats only in heartbeat()): past the RM's start-up
    // grace period, the largest request it accepts follows the registered nodes.
    MockNM amNode = rm.registerNode("localhost:1001", 2048, 2);
    MockNM worker = rm.registerNode("localhost:1002", 4096, 4);
    List<MockAM> ams = apps(amNode, "default", "default");
    ams.get(0).allocate(Arrays.asList(ask(1, 1024, 1, 1)), new ArrayList<>());
    ams.get(1).allocate(Arrays.asList(ask(1, 4096, 4, 1)), new ArrayList<>());
    assertEquals(Arrays.asList(Arrays.asList(), Arrays.asList(1)), heartbeat(worker, ams));
    assertEquals(0, s.fifoAllocations());
    assertTrue(s.grapheneAllocations() >= 1);
  }

  /**
   * The AM's priorities: of one application's two requests, priority 1 (1 GB) goes before
   * priority 5 (2 GB) though the latter packs the 2 GB worker twice as well; then nothing
   * else fits.
   */
  @Test
  public void theAmsPriorityOrderBeatsBetterPacking() throws Exception {
    GrapheneScheduler s = start(-1, 0);
    MockNM amNode = rm.registerNode("localhost:1001", 1024, 1);
    MockNM worker = rm.registerNode("localhost:1002", 2048, 2);
    List<MockAM> ams = apps(amNode, "default");
    ams.get(0).allocate(Arrays.asList(ask(5, 2048, 2, 1), ask(1, 1024, 1, 1)), new ArrayList<>());
    assertEquals(Arrays.asList(Arrays.asList(1)), heartbeat(worker, ams));
    assertEquals(0, s.fifoAllocations());
  }

  /**
   * SRPT: two applications ask for the same 1 GB containers, the first-submitted for six, the
   * second for one; the 1 GB worker goes to the second (FifoScheduler: to the first).
   */
  @Test
  public void shortestRemainingWorkGoesFirst() throws Exception {
    GrapheneScheduler s = start(-1, 1);
    MockNM amNode = rm.registerNode("localhost:1001", 2048, 2);
    MockNM worker = rm.registerNode("localhost:1002", 1024, 1);
    List<MockAM> ams = apps(amNode, "default", "default");
    ams.get(0).allocate(Arrays.asList(ask(1, 1024, 1, 6)), new ArrayList<>());
    ams.get(1).allocate(Arrays.asList(ask(1, 1024, 1, 1)), new ArrayList<>());
    assertEquals(Arrays.asList(Arrays.asList(), Arrays.asList(1)), heartbeat(worker, ams));
    assertEquals(0, s.fifoAllocations());
  }

  /**
   * Deficit counters: two queues each ask for eight 1 GB containers on an 8 GB worker. A
   * container is a tenth of the cluster's memory (2 GB AM node + 8 GB worker). Without
   * fairness graphene, like FifoScheduler, gives all eight to the first application (SRPT
   * ties, then submission order); with kappa 0.1 the queues get four each and no deficit ever
   * passed the bound.
   */
  @Test
  public void deficitBoundSharesTheNodeBetweenQueues() throws Exception {
    for (double kappa : new double[] {-1, 0.1}) {
      GrapheneScheduler s = start(kappa, 1);
      MockNM amNode = rm.registerNode("localhost:1001", 2048, 2);
      MockNM worker = rm.registerNode("localhost:1002", 8192, 8);
      List<MockAM> ams = apps(amNode, "a", "b");
      ams.get(0).allocate(Arrays.asList(ask(1, 1024, 1, 8)), new ArrayList<>());
      ams.get(1).allocate(Arrays.asList(ask(1, 1024, 1, 8)), new ArrayList<>());
      List<List<Integer>> got = heartbeat(worker, ams);
      Map<String, Integer> per = new HashMap<>();
      per.put("a", got.get(0).size());
      per.put("b", got.get(1).size());
      if (kappa < 0) {
        assertEquals("kappa off: " + got, Integer.valueOf(8), per.get("a"));
        assertEquals(Integer.valueOf(0), per.get("b"));
      } else {
        assertEquals("kappa 0.1: " + got, Integer.valueOf(4), per.get("a"));
        assertEquals(Integer.valueOf(4), per.get("b"));
        assertTrue("max deficit " + s.maxDeficitSeen(), s.maxDeficitSeen() <= 0.1 + 1e-9);
      }
      assertEquals(0, s.fifoAllocations());
      rm.stop();
      rm = null;
    }
  }

  /**
   * graphene-plan: of the 1 GB request of the application with less work and the 4 GB one that
   * fills the 4 GB worker (which graphene's packing picks, above), the plan puts the first in
   * the cluster's free 4 GB now and the second in the next slot: the worker takes the 1 GB one.
   */
  @Test
  public void planServesLessWorkFirst() throws Exception {
    GrapheneScheduler s = start(-1, 0, "graphene-plan");
    MockNM amNode = rm.registerNode("localhost:1001", 2048, 2);
    MockNM worker = rm.registerNode("localhost:1002", 4096, 4);
    List<MockAM> ams = apps(amNode, "default", "default");
    ams.get(0).allocate(Arrays.asList(ask(1, 1024, 1, 1)), new ArrayList<>());
    ams.get(1).allocate(Arrays.asList(ask(1, 4096, 4, 1)), new ArrayList<>());
    assertEquals(Arrays.asList(Arrays.asList(1), Arrays.asList()), heartbeat(worker, ams));
    assertEquals(0, s.fifoAllocations());
  }

  /** An unknown rule set or objective is refused by name when the scheduler is configured. */
  @Test
  public void unknownPolicyIsRefused() {
    for (String[] kv : new String[][] {{GrapheneScheduler.POLICY, "graphene-pln"},
        {GrapheneScheduler.PLAN_OBJECTIVE, "span"}}) {
      YarnConfiguration conf = new YarnConfiguration();
      conf.set(GrapheneScheduler.POLICY, "graphene-plan");
      conf.set(kv[0], kv[1]);
      try {
        new GrapheneScheduler().setConf(conf);
        throw new AssertionError("accepted " + kv[0] + " = " + kv[1]);
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains(kv[0]) && e.getMessage().contains(kv[1]));
      }
    }
  }
}
