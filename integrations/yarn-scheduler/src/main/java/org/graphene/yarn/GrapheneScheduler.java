package org.graphene.yarn;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Graphene's online packer as a YARN scheduler ({@code yarn.resourcemanager.scheduler.class}).
 *
 * <p>On every node update it picks, among the outstanding requests of all applications, the
 * containers to allocate on that node by graphene's rules ({@link GraphenePacker}: packing
 * against the node's unallocated resources, the AM's request priorities, shortest remaining
 * work, and deficit counters per queue bounded by kappa of the cluster).
 *
 * <p>Built on YARN's {@link FifoScheduler}: applications, attempts, nodes, container
 * bookkeeping, the AM protocol, metrics and recovery are all YARN's own; only the choice of
 * which request gets the node is replaced. Why that class: the CapacityScheduler's choice is
 * spread over its queue hierarchy and container allocators (a parent queue picks a child by
 * utilisation, a leaf queue an application by its ordering policy, which never sees the node,
 * the allocator a request by priority), so graphene's single cross-application pick per node
 * would replace most of it. FifoScheduler's own pass is one private method, run after
 * {@code AbstractYarnScheduler.nodeUpdate} has brought the node's containers up to date. That
 * method ends by calling the protected hook {@link #updateNodeResourceUtilization}, so graphene
 * allocates there, on a node whose state is current, under the scheduler's lock. FifoScheduler's
 * pass then runs and finds nothing: graphene's rules stop only when no outstanding request fits
 * the node's unallocated memory, and memory is the only resource FifoScheduler checks
 * ({@link #fifoAllocations()} counts what it would still take; the tests check it stays 0).
 *
 * <p>Rules: graphene's, or graphene-plan's ({@code yarn.scheduler.graphene.policy} =
 * {@code graphene-plan}): every outstanding container planned on a pooled grid of unit slots,
 * applications in least-remaining-work order, followed per node update ({@link GraphenePacker}).
 *
 * <p>Queues: FifoScheduler has one queue; the deficit counters are kept per queue name the
 * application was submitted to. Shares: {@code yarn.scheduler.graphene.queue.NAME.share}
 * (default 1, renormalised over the queues with work that fits the node).
 */
public class GrapheneScheduler extends FifoScheduler {
  private static final Logger LOG = LoggerFactory.getLogger(GrapheneScheduler.class);

  public static final String PREFIX = "yarn.scheduler.graphene.";
  /** Unfairness bound, a fraction of the cluster (DRF unit); negative: no fairness. */
  public static final String KAPPA = PREFIX + "kappa";
  /** K in eta = K x avg(packing) / avg(remaining work); 0: no SRPT term. */
  public static final String ETA_SCALE = PREFIX + "eta-scale";
  /** Candidates walked per scoring pass. */
  public static final String BUNDLE = PREFIX + "bundle";
  /** The rules: {@code graphene} (the default) or {@code graphene-plan}. */
  public static final String POLICY = PREFIX + "policy";
  /** graphene-plan's order of applications: {@code srpt} (the default) or {@code fifo}. */
  public static final String PLAN_OBJECTIVE = PREFIX + "plan.objective";

  private final GraphenePacker.State state = new GraphenePacker.State();
  private final Map<String, Integer> queueIndex = new HashMap<>();
  private final Map<ApplicationId, Integer> appQueue = new HashMap<>();
  private Configuration grapheneConf = new Configuration(false);
  private long allocations;
  private long leftForFifo;
  private double loggedMax;

  @Override
  public synchronized void setConf(Configuration conf) {
    super.setConf(conf);
    configure(conf);
  }

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    configure(conf);
    super.serviceInit(conf);
  }

  private synchronized void configure(Configuration conf) {
    grapheneConf = conf;
    double kappa = conf.getDouble(KAPPA, 0.1);
    state.kappa = kappa >= 0 ? kappa : Double.NaN;
    state.etaScale = conf.getDouble(ETA_SCALE, 1.0);
    state.bundle = Math.max(1, conf.getInt(BUNDLE, 16));
    String policy = conf.getTrimmed(POLICY, "graphene");
    String objective = conf.getTrimmed(PLAN_OBJECTIVE, "srpt");
    if (policy.equals("graphene")) {
      state.plan = null;
    } else if (policy.equals("graphene-plan")) {
      if (objective.equals("srpt")) {
        state.plan = GraphenePacker.Objective.SRPT;
      } else if (objective.equals("fifo")) {
        state.plan = GraphenePacker.Objective.FIFO;
      } else {
        throw new IllegalArgumentException(PLAN_OBJECTIVE + " = '" + objective + "': known are srpt, fifo");
      }
    } else {
      throw new IllegalArgumentException(POLICY + " = '" + policy + "': known are graphene, graphene-plan");
    }
    LOG.info("graphene: rules {}{}", policy, state.plan != null ? " (objective " + objective + ")" : "");
  }

  @Override
  public synchronized void addApplication(ApplicationId applicationId, String queue, String user,
      boolean isAppRecovering, boolean unmanagedAM) {
    String name = queue == null || queue.isEmpty() ? "default" : queue;
    Integer q = queueIndex.get(name);
    if (q == null) {
      double share = grapheneConf.getDouble(PREFIX + "queue." + name + ".share", 1.0);
      q = state.addQueue(share);
      queueIndex.put(name, q);
      LOG.info("graphene: queue {} (index {}, share {})", name, q, share);
    }
    appQueue.put(applicationId, q);
    super.addApplication(applicationId, queue, user, isAppRecovering, unmanagedAM);
  }

  /** The last hook of AbstractYarnScheduler.nodeUpdate: the node is current; allocate here. */
  @Override
  protected void updateNodeResourceUtilization(RMNode nm, SchedulerNode schedulerNode) {
    super.updateNodeResourceUtilization(nm, schedulerNode);
    if (rmContext.isWorkPreservingRecoveryEnabled() && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      return;
    }
    if (schedulerNode instanceof FiCaSchedulerNode) {
      synchronized (this) {
        assign((FiCaSchedulerNode) schedulerNode);
      }
    }
  }

  private static final class Key {
    final FifoAppAttempt attempt;
    final SchedulerRequestKey key;
    final Resource capability;

    Key(FifoAppAttempt attempt, SchedulerRequestKey key, Resource capability) {
      this.attempt = attempt;
      this.key = key;
      this.capability = capability;
    }
  }

  private void assign(FiCaSchedulerNode node) {
    Resource cap = node.getTotalResource();
    Resource free = node.getUnallocatedResource();
    Resource cluster = getClusterResource();
    Resource clusterFree = Resources.subtract(cluster, getUsedResource());
    List<GraphenePacker.App> apps = new ArrayList<>();
    List<GraphenePacker.Request> requests = new ArrayList<>();
    Map<Long, Key> keys = new HashMap<>();
    int order = 0;
    for (Map.Entry<ApplicationId, SchedulerApplication<FifoAppAttempt>> e : applications.entrySet()) {
      FifoAppAttempt attempt = e.getValue().getCurrentAppAttempt();
      Integer q = appQueue.get(e.getKey());
      if (attempt == null || q == null || SchedulerAppUtils.isPlaceBlacklisted(attempt, node, LOG)) {
        continue;
      }
      int id = e.getKey().getId();
      apps.add(new GraphenePacker.App(id, q, order++));
      for (SchedulerRequestKey k : attempt.getSchedulerKeys()) {
        PendingAsk ask = attempt.getPendingAsk(k, ResourceRequest.ANY);
        int prio = k.getPriority().getPriority();
        long slot = ((long) id << 32) | (prio & 0xffffffffL);
        if (ask.getCount() <= 0 || keys.containsKey(slot)) {
          // Two keys of one priority (different allocation request ids): the first is served
          // first, the second at a later node update.
          continue;
        }
        Resource r = ask.getPerAllocationResource();
        keys.put(slot, new Key(attempt, k, r));
        requests.add(new GraphenePacker.Request(id, prio, r.getMemorySize(), r.getVirtualCores(),
            ask.getCount()));
      }
    }
    if (requests.isEmpty()) {
      return;
    }
    List<GraphenePacker.Pick> picks = GraphenePacker.nodeUpdate(state,
        new double[] {cap.getMemorySize(), cap.getVirtualCores()},
        new double[] {free.getMemorySize(), free.getVirtualCores()},
        new double[] {cluster.getMemorySize(), cluster.getVirtualCores()},
        new double[] {clusterFree.getMemorySize(), clusterFree.getVirtualCores()}, apps, requests);
    for (GraphenePacker.Pick p : picks) {
      Key k = keys.get(((long) p.app << 32) | (p.priority & 0xffffffffL));
      if (k == null) {
        continue;
      }
      synchronized (k.attempt) {
        ContainerId containerId = BuilderUtils.newContainerId(k.attempt.getApplicationAttemptId(),
            k.attempt.getNewContainerId());
        Container container = BuilderUtils.newContainer(containerId, node.getNodeID(),
            node.getRMNode().getHttpAddress(), k.capability, k.key.getPriority(), null,
            k.key.getAllocationRequestId());
        RMContainer rm = k.attempt.allocate(NodeType.OFF_SWITCH, node, k.key, container);
        if (rm == null) {
          continue;
        }
        node.allocateContainer(rm);
        Resources.addTo(getUsedResource(), rm.getAllocatedResource());
        allocations++;
      }
    }
    // What FifoScheduler's own pass could still take here (memory is all it checks).
    for (GraphenePacker.Request r : requests) {
      Key k = keys.get(((long) r.app << 32) | (r.priority & 0xffffffffL));
      if (k != null && k.attempt.getPendingAsk(k.key, ResourceRequest.ANY).getCount() > 0
          && k.capability.getMemorySize() <= node.getUnallocatedResource().getMemorySize()) {
        leftForFifo++;
      }
    }
    if (state.maxSeen > loggedMax) {
      // What scripts/check-sls-run reads to check the bound (the last such line is the run's).
      loggedMax = state.maxSeen;
      LOG.info("graphene: deficit max {} kappa {} largest charge {} queues {}", state.maxSeen,
          state.kappa, state.maxCharge, state.shares.length);
    }
    if (LOG.isDebugEnabled()) {
      LOG.debug("graphene: node {} picks {} deficits {}", node.getNodeID(), picks,
          java.util.Arrays.toString(state.deficits));
    }
  }

  /** Containers graphene allocated. */
  public synchronized long grapheneAllocations() {
    return allocations;
  }

  /** Node updates that left a request FifoScheduler's own pass could take (should be 0). */
  public synchronized long fifoAllocations() {
    return leftForFifo;
  }

  /** Deficit per queue name. */
  public synchronized Map<String, Double> deficits() {
    Map<String, Double> out = new HashMap<>();
    for (Map.Entry<String, Integer> e : queueIndex.entrySet()) {
      out.put(e.getKey(), state.deficits[e.getValue()]);
    }
    return out;
  }

  /** The largest deficit any queue reached. */
  public synchronized double maxDeficitSeen() {
    return state.maxSeen;
  }
}
