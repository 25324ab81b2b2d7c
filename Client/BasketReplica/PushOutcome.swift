public import BasketCore

/// The server's answer to a push: operations accepted and already known, the list's cursor
/// and epoch, the server's clock.
public typealias PushOutcome = Wire.PushResult
