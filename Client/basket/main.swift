// The `basket` executable: hands the raw arguments to BasketCLI, which holds all the logic.
import BasketCLI
import Foundation

var rawArguments: [[UInt8]] = []
for index in 1..<Int(CommandLine.argc) {
    guard let pointer = CommandLine.unsafeArgv[index] else { continue }
    rawArguments.append(
        Array(
            UnsafeBufferPointer(
                start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))))
}
exit(BasketCLI.main(rawArguments: rawArguments, environment: ProcessInfo.processInfo.environment))
