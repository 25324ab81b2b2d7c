// The `basket-server` executable: all logic lives in BasketServerCLI.ServerCommand.
import BasketServerCLI
import Foundation

exit(ServerCommand.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
