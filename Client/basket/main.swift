// The `basket` executable: hands the raw arguments to BasketCLI, which holds all the logic.
import BasketCLI
import Foundation

// A parent may have left SIGINT/SIGTERM blocked or ignored (both survive exec): Ctrl-C and kill must work.
signal(SIGINT, SIG_DFL)
signal(SIGTERM, SIG_DFL)
var signals = sigset_t()
sigemptyset(&signals)
sigaddset(&signals, SIGINT)
sigaddset(&signals, SIGTERM)
sigprocmask(SIG_UNBLOCK, &signals, nil)

var rawArguments: [[UInt8]] = []
for index in 1..<Int(CommandLine.argc) {
    guard let pointer = CommandLine.unsafeArgv[index] else { continue }
    rawArguments.append(
        Array(
            UnsafeBufferPointer(
                start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))))
}
exit(BasketCLI.main(rawArguments: rawArguments, environment: ProcessInfo.processInfo.environment))
