/// Owns onboarding: the form, its validation, QR pairing links, the server
/// check, and exchanging a pairing code for a token. What becomes of the
/// paired server is the servers feature's (`paired`).
///
///     submit_pairing → http_pair
///     pair_finished ok  → paired(server, token)
///     pair_finished 401 → "Invalid or expired pairing code"
public struct PairingInteractor: Interactor {
    public init() {}

    /// What pairing acts on.
    public enum Input: Equatable, Sendable {
        // Actions
        case setHost(String)
        case setPort(String)
        case setPairCode(String)
        case setDeviceName(String)
        /// The form's working directory (a saved server's belongs to the servers).
        case setWorkingDir(String)
        case submitPairing
        /// Fill the form from a saved server, to pair it again.
        case pairAgain(serverID: String)
        case scanQR
        case checkServer
        // Platform events
        case qrPayloadScanned(payload: String)
        case qrScanCancelled
        case pairFinished(PairResult)
        case healthFinished(HealthResult)
        // The lifecycle's outputs
        case identityReady
        case identityFailed
    }

    public func interact(_ state: inout PairingForm, _ input: Input, _ facts: Facts) -> Emission {
        switch input {
        case .setHost(let value):
            state.host = value
            state.health = nil
            return .none
        case .setPort(let value):
            state.port = value
            state.health = nil
            return .none
        case .setPairCode(let value):
            state.code = value
            if !value.isEmpty { state.heldCode = nil }
            return .none
        case .setDeviceName(let value):
            state.deviceName = value
            return .none
        case .setWorkingDir(let value):
            state.workingDir = value
            return .none
        case .submitPairing:
            return submit(&state, facts)
        case .pairAgain(let serverID):
            return pairAgain(&state, serverID, facts)
        case .identityReady:
            return identityReady(&state, facts)
        case .identityFailed:
            guard state.awaitingIdentity else { return .none }
            state.awaitingIdentity = false
            state.isSubmitting = false
            let message = "This device could not create its identity for pairing. Try again."
            return .tell(.pairingFailed) + .internal(.showError(ErrorBanner(message: message)))
                + .announce(.pairingFailed(message: message))
        case .scanQR:
            return .effect(.device(.requestCameraQRScan))
        case .checkServer:
            return check(&state)
        case .qrPayloadScanned(let payload):
            return scanned(&state, payload, facts)
        case .qrScanCancelled:
            return .note("QR scan cancelled")
        case .pairFinished(let result):
            return paired(&state, result, facts)
        case .healthFinished(let result):
            return checked(&state, result, facts)
        }
    }

    private func submit(_ state: inout PairingForm, _ facts: Facts) -> Emission {
        guard !state.isSubmitting else { return .note("pairing already in progress") }
        guard let form = state.validated else {
            state.showAllErrors = true
            // Every message shows under its field; the report names the fields for a script.
            return .note("pairing form is incomplete: " + state.errors.fieldNames.joined(separator: ", "), .refused)
        }
        state.isSubmitting = true
        state.submittedWorkingDir = form.workingDir
        // The code is used now: it leaves the state, kept aside for a retry.
        state.code = ""
        state.heldCode = form.code
        let started = Emission.tell(.pairingStarted) + .scrub(PairingForm.codePath)
        guard let deviceID = facts.lifecycle.deviceID else {
            // No identity yet: the host creates one first, then the code goes out.
            state.awaitingIdentity = true
            return started + .tell(.identityNeeded)
        }
        return started + Self.pair(form, deviceID: deviceID, facts)
    }

    /// The form filled from a saved server: its address and working directory,
    /// no code (a code works once: pairing again needs a new one from `jcode pair`).
    private func pairAgain(_ state: inout PairingForm, _ serverID: String, _ facts: Facts) -> Emission {
        guard !state.isSubmitting else { return .note("pair_again: pairing already in progress") }
        guard let server = facts.servers.list.first(where: { $0.id == serverID }) else {
            return .note("pair_again: no saved server \(serverID)", .ignored)
        }
        state.host = server.address.useTLS ? "https://\(server.address.host)" : server.address.host
        state.port = String(server.address.port)
        state.workingDir = server.workingDir
        state.code = ""
        state.heldCode = nil
        state.health = nil
        state.showAllErrors = false
        return .none
    }

    /// The identity pairing waited for arrived: send the held code.
    private func identityReady(_ state: inout PairingForm, _ facts: Facts) -> Emission {
        guard state.awaitingIdentity else { return .none }
        state.awaitingIdentity = false
        guard let form = state.validated, let deviceID = facts.lifecycle.deviceID else {
            state.isSubmitting = false
            return .tell(.pairingFailed) + .note("pairing form changed while waiting for the device id")
        }
        return Self.pair(form, deviceID: deviceID, facts)
    }

    private static func pair(_ form: PairingForm.Validated, deviceID: String, _ facts: Facts) -> Emission {
        .effect(
            .http(
                .pair(
                    host: form.address.host, port: form.address.port, useTLS: form.address.useTLS, code: form.code,
                    deviceID: deviceID, deviceName: form.deviceName, apnsToken: facts.lifecycle.pushToken)))
    }

    private func scanned(_ state: inout PairingForm, _ payload: String, _ facts: Facts) -> Emission {
        switch PairingLink.parse(payload) {
        case .failure(let problem):
            return .internal(.showError(ErrorBanner(message: problem.message))) + .effect(.device(.haptic(style: .error)))
        case .success(let link):
            state.host = link.host
            state.port = link.port ?? String(ServerAddress.defaultPort)
            state.code = link.code
            state.health = nil
            let shown = Emission.tell(.pairingLinkScanned)
            if state.validated == nil {
                // Something only the person can give (device name, working directory): the form shows what.
                state.showAllErrors = true
                return shown
            }
            // Complete: submitted at once, as the Pair button would.
            return shown + submit(&state, facts)
        }
    }

    private func paired(_ state: inout PairingForm, _ result: PairResult, _ facts: Facts) -> Emission {
        guard let request = facts.pending(result.effectID), request.kind == .httpPair,
              let address = ServerAddress(effectFields: request.fields)
        else {
            return .note("pair_finished for effect \(result.effectID), which is not a pending http_pair; ignored", .ignored)
        }
        state.isSubmitting = false
        func failed(_ message: String) -> Emission {
            .settle(result.effectID) + .tell(.pairingFailed) + .internal(.showError(ErrorBanner(message: message)))
                + .effect(.device(.haptic(style: .error))) + .announce(.pairingFailed(message: message))
        }
        guard result.ok else {
            if result.status == 401 {
                state.heldCode = nil
                return failed(Self.invalidCode)
            }
            if let status = result.status {
                let detail = result.error.map { ": \($0)" } ?? ""
                return failed("The server at \(address.display) answered HTTP \(status)\(detail). Try again.")
            }
            let detail = result.error.map { " (\($0))" } ?? ""
            return failed(
                "Could not reach \(address.host):\(address.port)\(detail). Check that jcode is running there with the gateway enabled and that this device is on the same network.")
        }
        guard let token = result.token, !token.isEmpty else {
            state.heldCode = nil
            return failed("The server accepted the code but sent no token. Run `jcode pair` again and retry.")
        }
        state.heldCode = nil
        state.showAllErrors = false
        state.health = nil
        let workingDir = state.submittedWorkingDir ?? state.workingDir.trimmingSpaces()
        state.submittedWorkingDir = nil
        let server = PairedServer(
            address: address, name: result.serverName ?? address.display, serverVersion: result.serverVersion,
            workingDir: workingDir, token: token)
        var emission = Emission.settle(result.effectID) + .tell(.paired(server)) + .effect(.device(.haptic(style: .success)))
            + .announce(.serverPaired(serverID: address.serverID, serverName: server.name))
        if facts.lifecycle.pushToken == nil { emission.append(.effect(.device(.registerPushNotifications))) }
        return emission
    }

    static let invalidCode = "Invalid or expired pairing code"

    private func check(_ state: inout PairingForm) -> Emission {
        guard let address = state.address else {
            state.showAllErrors = true
            return .note("check_server: the host or port is invalid")
        }
        state.health = PairingForm.HealthCheck(status: .checking, message: "Checking \(address.display)…")
        return .effect(.http(.health(host: address.host, port: address.port, useTLS: address.useTLS)))
    }

    private func checked(_ state: inout PairingForm, _ result: HealthResult, _ facts: Facts) -> Emission {
        guard let request = facts.pending(result.effectID), request.kind == .httpHealth,
              let address = ServerAddress(effectFields: request.fields)
        else {
            return .note("health_finished for effect \(result.effectID), which is not a pending http_health; ignored", .ignored)
        }
        // The person edited the address since asking: this answer is about another server.
        guard state.address == address, state.health?.status == .checking else {
            return .settle(result.effectID) + .note("health_finished for \(address.display), no longer the address in the form; ignored", .ignored)
        }
        if result.ok {
            let version = result.version.map { "jcode \($0)" } ?? "jcode"
            state.health = PairingForm.HealthCheck(status: .reachable, message: "\(version) is running at \(address.display).")
            return .settle(result.effectID) + .tell(.serverVersionSeen(serverID: address.serverID, version: result.version))
        } else if let status = result.status {
            state.health = PairingForm.HealthCheck(
                status: .failed, message: "\(address.display) answered HTTP \(status): is this the jcode gateway port?")
        } else {
            state.health = PairingForm.HealthCheck(
                status: .unreachable, message: "Could not reach \(address.display). Is jcode running with the gateway enabled?")
        }
        return .settle(result.effectID)
    }
}
