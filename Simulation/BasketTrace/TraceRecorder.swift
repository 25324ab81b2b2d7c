public import BasketCore
public import BasketModel

/// Builds a ``Trace`` as a run goes: a step begins, its events are recorded, and at the end each
/// device's list is added. Used by `basket-lab run --trace` (and `replay`) and `basket-sim --trace`.
public final class TraceRecorder {
    /// The trace so far.
    public private(set) var trace: Trace

    /// A recorder for a run named `title` of `devices`.
    public init(title: String, devices: [String]) {
        trace = Trace(title: title, devices: devices)
    }

    /// A new step (a column of the picture), labelled as written.
    public func begin(_ label: String) {
        trace.steps.append(Trace.Step(label: label))
    }

    /// Something that happened in the current step.
    public func record(_ event: Trace.Event) {
        if trace.steps.isEmpty { begin("(set-up)") }
        switch event {
        case .wrote(_, let writes, _): learnNames(writes)
        case .synced(_, _, let pulled, _): learnNames(pulled)
        default: break
        }
        trace.steps[trace.steps.count - 1].events.append(event)
    }

    /// Marks the current step as where the run failed.
    public func failed() {
        if trace.steps.isEmpty { begin("(set-up)") }
        trace.steps[trace.steps.count - 1].failed = true
    }

    /// Each device's replica id, to name the writer of each write.
    public func device(_ device: String, isReplica replica: ReplicaID) {
        trace.replicas[device] = replica
    }

    /// A device's list at the end of the run.
    public func finish(_ device: String, showing list: ReferenceModel.List) {
        trace.finalLists[device] = list
        for item in list.items.values { trace.names[item.id] = item.name }
    }

    func learnNames(_ ops: [Op]) {
        for op in ops where op.field == .name {
            if let name = op.value.textValue { trace.names[op.item] = name }
        }
    }
}
