// The `basket-server` executable: all logic lives in BasketServer.ServerCommand.
import BasketServer
import Foundation

exit(ServerCommand.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
