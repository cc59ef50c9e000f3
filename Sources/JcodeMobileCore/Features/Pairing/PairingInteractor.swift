/// Owns onboarding: the form, its validation, QR pairing links, the server
/// check, and turning a pairing code into a saved server and a connection.
///
///     submit_pairing → http_pair
///     pair_finished ok  → secure_store_write(token) + websocket_connect(token)
///     pair_finished 401 → "Invalid or expired pairing code"
public struct PairingInteractor: Interactor {
    public init() {}

    static let invalidCode = "Invalid or expired pairing code"

    public func interact(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .action(.setHost(let value)):
            state.pairing.host = value
            state.pairing.health = nil
            return .none
        case .action(.setPort(let value)):
            state.pairing.port = value
            state.pairing.health = nil
            return .none
        case .action(.setPairCode(let value)):
            state.pairing.code = value
            if !value.isEmpty { state.pairing.heldCode = nil }
            return .none
        case .action(.setDeviceName(let value)):
            state.pairing.deviceName = value
            return .none
        case .action(.submitPairing):
            return submit(&state)
        case .action(.scanQR):
            return .effect(.device(.requestCameraQRScan))
        case .action(.checkServer):
            return check(&state)
        case .platform(.device(.qrPayloadScanned(let payload))):
            return scanned(&state, payload)
        case .platform(.device(.qrScanCancelled)):
            return .note("QR scan cancelled")
        case .platform(.http(.pairFinished(let result))):
            return paired(&state, result)
        case .platform(.http(.healthFinished(let result))):
            return checked(&state, result)
        default:
            return .none
        }
    }

    private func submit(_ state: inout AppState) -> Emission {
        guard !state.pairing.isSubmitting else { return .note("pairing already in progress") }
        guard let form = state.pairing.validated else {
            state.pairing.showAllErrors = true
            return .note("pairing form is incomplete")
        }
        state.pairing.isSubmitting = true
        // The code is used now: it leaves the state, kept aside for a retry.
        state.pairing.code = ""
        state.pairing.heldCode = form.code
        state.errorBanner = nil
        if state.connection.phase != .connected { state.connection.phase = .pairing }
        return .scrub(PairingForm.codePath) + .effect(
            .http(
                .pair(
                    host: form.address.host, port: form.address.port, useTLS: form.address.useTLS, code: form.code,
                    deviceID: state.lifecycle.deviceID, deviceName: form.deviceName, apnsToken: state.lifecycle.pushToken)))
    }

    private func scanned(_ state: inout AppState, _ payload: String) -> Emission {
        switch PairingLink.parse(payload) {
        case .failure(let problem):
            state.showError(problem.message)
            return .effect(.device(.haptic(style: .error)))
        case .success(let link):
            state.pairing.host = link.host
            state.pairing.port = link.port ?? ""
            state.pairing.code = link.code
            state.pairing.health = nil
            state.screen = .onboarding
            if state.pairing.deviceName.trimmingSpaces().isEmpty {
                // Nothing more to ask: the form shows what is missing.
                state.pairing.showAllErrors = true
                return .none
            }
            return .action(.submitPairing)
        }
    }

    private func paired(_ state: inout AppState, _ result: PairResult) -> Emission {
        guard case .http(.pair(let host, let port, let useTLS, _, _, _, _))? = state.effects.resolve(result.effectID) else {
            return .note("pair_finished for effect \(result.effectID), which is not a pending http_pair; ignored")
        }
        state.pairing.isSubmitting = false
        let address = ServerAddress(host: host, port: port, useTLS: useTLS)
        let phaseBefore = state.connection.phase
        func failed(_ message: String) -> Emission {
            if phaseBefore == .pairing { state.connection.phase = .disconnected }
            state.showError(message)
            return .effect(.device(.haptic(style: .error)))
        }
        guard result.ok else {
            if result.status == 401 {
                state.pairing.heldCode = nil
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
            state.pairing.heldCode = nil
            return failed("The server accepted the code but sent no token. Run `jcode pair` again and retry.")
        }
        let server = SavedServer(address: address, name: result.serverName ?? address.display, serverVersion: result.serverVersion)
        if let i = state.servers.firstIndex(where: { $0.id == server.id }) {
            state.servers[i] = server
        } else {
            state.servers.append(server)
        }
        if state.selectedServerID != server.id {
            state.resetSession()
            state.outbox = []
        }
        state.selectedServerID = server.id
        state.credentials[server.id] = token
        state.pairing.heldCode = nil
        state.pairing.showAllErrors = false
        state.pairing.health = nil
        state.session.serverVersion = result.serverVersion
        state.connection.attempt = 0
        state.connection.reason = nil
        var emission = Emission.effect(.secureStore(.write(key: server.tokenKey, value: token)))
        emission.append(ConnectionInteractor.persistServers(state))
        emission.append(ConnectionInteractor.connect(&state, to: server, token: token))
        emission.append(.effect(.device(.haptic(style: .success))))
        if state.lifecycle.pushToken == nil { emission.append(.effect(.device(.registerPushNotifications))) }
        return emission
    }

    private func check(_ state: inout AppState) -> Emission {
        guard let address = state.pairing.address else {
            state.pairing.showAllErrors = true
            return .note("check_server: the host or port is invalid")
        }
        state.pairing.health = PairingForm.HealthCheck(status: .checking, message: "Checking \(address.display)…")
        return .effect(.http(.health(host: address.host, port: address.port, useTLS: address.useTLS)))
    }

    private func checked(_ state: inout AppState, _ result: HealthResult) -> Emission {
        guard case .http(.health(let host, let port, let useTLS))? = state.effects.resolve(result.effectID) else {
            return .note("health_finished for effect \(result.effectID), which is not a pending http_health; ignored")
        }
        let address = ServerAddress(host: host, port: port, useTLS: useTLS)
        // The person edited the address since asking: this answer is about another server.
        guard state.pairing.address == address, state.pairing.health?.status == .checking else {
            return .note("health_finished for \(address.display), no longer the address in the form; ignored")
        }
        if result.ok {
            let version = result.version.map { "jcode \($0)" } ?? "jcode"
            state.pairing.health = PairingForm.HealthCheck(status: .reachable, message: "\(version) is running at \(address.display).")
            if let i = state.servers.firstIndex(where: { $0.id == address.serverID }) {
                state.servers[i].serverVersion = result.version ?? state.servers[i].serverVersion
            }
        } else if let status = result.status {
            state.pairing.health = PairingForm.HealthCheck(
                status: .failed, message: "\(address.display) answered HTTP \(status): is this the jcode gateway port?")
        } else {
            state.pairing.health = PairingForm.HealthCheck(
                status: .unreachable, message: "Could not reach \(address.display). Is jcode running with the gateway enabled?")
        }
        return .none
    }
}
